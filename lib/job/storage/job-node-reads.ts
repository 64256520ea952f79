import type { NodeData, NodeStat, WatchEvent } from '../../registry/registry.types.js';
import type { TreeCache, TreeEvent } from '../../registry/tree-cache.js';
import type { RegistryReads } from '../../registry/registry-center.js';
import { descendingStringOrder } from '../../util/java-hash.js';

// The two doors a coordination service reads through (JobNodeStorage.cached and .direct).

/** Reads from the job's TreeCache: no request, the state as the cache last heard it. */
export class CachedReads {
  constructor(private readonly cache: TreeCache) {}

  get(path: string): string | undefined {
    return this.cache.get(path);
  }

  has(path: string): boolean {
    return this.cache.has(path);
  }

  /** The node's data version as cached; undefined when not cached or not read. */
  version(path: string): number | undefined {
    return this.cache.version(path);
  }

  /** Whether the node is cached but its data was not read (a lazy node, see NodeShape). */
  isUnread(path: string): boolean {
    return this.cache.isUnread(path);
  }

  /** Reads into the cache the data of those nodes that are cached unread. */
  readUnread(paths: readonly string[]): Promise<void> {
    return this.cache.readUnread(paths);
  }

  /** Children in ElasticJob's order: descending string order. */
  children(path: string): string[] {
    return this.cache.children(path).sort(descendingStringOrder);
  }

  /** Whether a child's name passes `test` (in no order; nothing copied). */
  someChild(path: string, test: (name: string) => boolean): boolean {
    return this.cache.someChild(path, test);
  }

  childCount(path: string): number {
    return this.cache.childCount(path);
  }

  listen(listener: (event: TreeEvent) => void): () => void {
    return this.cache.listen(listener);
  }

  /** Waits until every read set off by earlier writes and events has landed in the cache. */
  settled(): Promise<void> {
    return this.cache.settled();
  }

  /**
   * Event-driven wait: resolves true as soon as `condition()` holds (checked now and after each cache event),
   * false after `timeoutMs`. Never polls.
   */
  waitFor(condition: () => boolean, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (condition()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const finish = (value: boolean): void => {
        clearTimeout(timer);
        unsubscribe();
        signal?.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const onAbort = (): void => finish(condition());
      const unsubscribe = this.cache.listen(() => {
        if (condition()) finish(true);
      });
      const timer = setTimeout(() => finish(condition()), timeoutMs);
      timer.unref(); // a wait never keeps the process alive (the caller's own work does)
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** Reads asked of ZooKeeper now, for when the cache may lag behind. Missing nodes are undefined. */
export class DirectReads {
  constructor(private readonly registry: RegistryReads) {}

  async get(path: string): Promise<string | undefined> {
    return (await this.registry.getData(path))?.data.toString('utf8');
  }

  /** Data and stat (owner session, mtime, version). */
  node(path: string): Promise<NodeData | undefined> {
    return this.registry.getData(path);
  }

  exists(path: string): Promise<NodeStat | undefined> {
    return this.registry.exists(path);
  }

  /** Unsorted. */
  children(path: string): Promise<string[] | undefined> {
    return this.registry.getChildren(path);
  }

  /**
   * Calls `onDeleted` once, when the node is deleted: now (already missing) or later (a one-shot exists watch, set
   * again after a data change). Best effort, for what is told rather than done: the watch lives as long as the
   * session (nothing to close), and one that cannot be set again after a change is not retried.
   */
  async whenDeleted(path: string, onDeleted: () => void): Promise<void> {
    let told = false;
    const tell = (): void => {
      if (!told) onDeleted();
      told = true;
    };
    const watch = async (): Promise<void> => {
      if (!told && (await this.registry.exists(path, watcher)) === undefined) tell();
    };
    const watcher = (event: WatchEvent): void => {
      if (event.type === 'NODE_DELETED') tell();
      else void watch().catch(() => undefined);
    };
    await watch();
  }
}
