import { Logger } from '@nestjs/common';
import type { NamespacePaths } from './namespace-paths.js';
import type { Watcher } from './registry.types.js';
import type { RawNotification } from './zookeeper-client.adapter.js';
import type { RegistryStats } from './registry-center.js';
import type { ZookeeperTransport } from './zookeeper-transport.js';

/**
 * Curator's PersistentWatcher for many roots: ZooKeeper 3.6+ persistent recursive watches (docs/reference/
 * zookeeper.md §2.4), and the dispatch of their notifications to the watchers of each root. A watch belongs to
 * one connection: the client's reconnect (SET_WATCHES) does not carry it, so its owner re-adds it on every
 * (re)connection, as Curator's does.
 */
export class PersistentWatchers {
  private readonly logger = new Logger('ElasticJob:ZooKeeper');
  /** Watchers by namespace-relative root. */
  private readonly watchers = new Map<string, Set<Watcher>>();

  constructor(
    private readonly transport: ZookeeperTransport,
    private readonly paths: NamespacePaths,
    private readonly stats: RegistryStats,
  ) {}

  async add(path: string, watcher: Watcher): Promise<void> {
    let watchers = this.watchers.get(path);
    if (!watchers) this.watchers.set(path, (watchers = new Set()));
    watchers.add(watcher);
    await this.transport.addPersistentRecursiveWatch(path);
  }

  /**
   * Stops calling `watcher`. The server-side watch stays until the connection ends (removeWatches could answer
   * with an error code the client cannot parse, docs/reference/zookeeper.md §2.5); its few notifications are
   * dropped here.
   */
  remove(path: string, watcher: Watcher): void {
    const watchers = this.watchers.get(path);
    watchers?.delete(watcher);
    if (watchers?.size === 0) this.watchers.delete(path);
  }

  /** Every notification of the connection: those under a watched root go to its watchers, nearest root first. */
  dispatch(notification: RawNotification): void {
    // Persistent recursive watches never send NODE_CHILDREN_CHANGED; those come from one-shot watches.
    if (
      notification.type === 'NODE_CHILDREN_CHANGED' ||
      this.watchers.size === 0 ||
      !this.paths.isInside(notification.path)
    )
      return;
    const path = this.paths.relative(notification.path);
    for (let root = path; ; root = root.slice(0, Math.max(1, root.lastIndexOf('/')))) {
      for (const watcher of this.watchers.get(root) ?? []) {
        this.stats.watchEvents++;
        try {
          watcher({ type: notification.type, path });
        } catch (error) {
          this.logger.error(`persistent watcher on ${root} failed: ${String(error)}`);
        }
      }
      if (root === '/') return;
    }
  }
}
