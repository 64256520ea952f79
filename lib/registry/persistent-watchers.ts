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
  private readonly watchers = new Map<string, ReadonlyArray<Watcher>>();
  /**
   * The depths (segments: `/` is 0, `/{job}` 1) at which some root is watched, deepest first: a notification is
   * looked up at those only. Walking up every level of its path cost 1.6 of 35 s CPU in a 10,000-job start-up.
   */
  private depths: number[] = [];
  /**
   * Watched roots at each depth: the depths change only when the first root at a depth comes or the last goes.
   * (Recounting every root on every add made a 10,000-job start-up quadratic: 2.5 s of CPU, and 1.2 s at shutdown.)
   */
  private readonly rootsAtDepth = new Map<number, number>();

  constructor(
    private readonly transport: ZookeeperTransport,
    private readonly paths: NamespacePaths,
    private readonly stats: RegistryStats,
  ) {}

  async add(path: string, watcher: Watcher): Promise<void> {
    // Replaced, never changed in place (a dispatch walks the array it found); a root has one watcher, and an array
    // of exactly it is ~130 bytes less than a Set.
    const watchers = this.watchers.get(path);
    if (!watchers) {
      this.watchers.set(path, [watcher]);
      this.countRoot(path, +1);
    } else if (!watchers.includes(watcher)) this.watchers.set(path, watchers.concat(watcher));
    await this.transport.addPersistentRecursiveWatch(path);
  }

  /**
   * Stops calling `watcher`. The server-side watch stays until the connection ends (removeWatches could answer
   * with an error code the client cannot parse, docs/reference/zookeeper.md §2.5); its few notifications are
   * dropped here.
   */
  remove(path: string, watcher: Watcher): void {
    const watchers = this.watchers.get(path);
    if (!watchers?.includes(watcher)) return;
    const left = watchers.filter((other) => other !== watcher);
    if (left.length > 0) this.watchers.set(path, left);
    else {
      this.watchers.delete(path);
      this.countRoot(path, -1);
    }
  }

  private countRoot(root: string, change: 1 | -1): void {
    const depth = depthOf(root);
    const count = (this.rootsAtDepth.get(depth) ?? 0) + change;
    if (count > 0) this.rootsAtDepth.set(depth, count);
    else this.rootsAtDepth.delete(depth);
    if (count === 0 || (count === 1 && change === 1)) this.depths = [...this.rootsAtDepth.keys()].sort((a, b) => b - a);
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
    for (const depth of this.depths) {
      const root = rootAtDepth(path, depth);
      const watchers = root === undefined ? undefined : this.watchers.get(root);
      if (!watchers) continue;
      for (const watcher of watchers) {
        this.stats.watchEvents++;
        try {
          watcher({ type: notification.type, path });
        } catch (error) {
          this.logger.error(`persistent watcher on ${root} failed: ${String(error)}`);
        }
      }
    }
  }
}

/** Segments of a namespace-relative path: `/` 0, `/a` 1, `/a/b` 2. */
export function depthOf(path: string): number {
  if (path === '/') return 0;
  let depth = 0;
  for (let at = path.indexOf('/'); at !== -1; at = path.indexOf('/', at + 1)) depth++;
  return depth;
}

/** The path's ancestor-or-self with `depth` segments; undefined when the path is shallower. */
export function rootAtDepth(path: string, depth: number): string | undefined {
  if (depth === 0) return '/';
  if (path === '/') return undefined;
  let end = 0;
  for (let segment = 0; segment < depth; segment++) {
    end = path.indexOf('/', end + 1);
    if (end === -1) return segment === depth - 1 ? path : undefined;
  }
  return path.slice(0, end);
}
