import { Logger } from '@nestjs/common';
import { registryErrorCode, type ZookeeperRegistryCenter } from './zookeeper-registry-center.js';
import type { ConnectionStateChange, WatchEvent } from './registry.types.js';

export type TreeEventType = 'ADDED' | 'UPDATED' | 'DELETED';

/** ElasticJob's `DataChangedEvent`: data is UTF-8, '' when empty; for DELETED it is the last known data. */
export interface TreeEvent {
  type: TreeEventType;
  path: string;
  data: string;
}

interface CachedNode {
  data: Buffer;
  version: number;
  children: Set<string>;
}

interface Pending {
  data: boolean;
  children: boolean;
}

interface Inflight extends Pending {
  /** Which wave of reads this refresh belongs to: see settled(). */
  epoch: number;
}

/**
 * A local mirror of one subtree, kept up to date with one-shot watches (TreeCache-style; node-zookeeper-client
 * cannot do ZooKeeper 3.6's persistent recursive watches, reference/zookeeper.md §2.6), exposing what
 * ElasticJob's CuratorCache gives its listeners: ADDED / UPDATED / DELETED per node.
 *
 * Reads at firing time come from here, so a steady-state firing reads nothing from ZooKeeper.
 * One stable watcher function serves every path (the client de-duplicates by identity). After a reconnect or a
 * new session the whole tree is re-read and the differences are emitted as events, as Curator's TreeCache does.
 */
export class TreeCache {
  private readonly logger: Logger;
  private readonly nodes = new Map<string, CachedNode>();
  private readonly listeners = new Set<(event: TreeEvent) => void>();
  private readonly inflight = new Map<string, Inflight>();
  /** Refreshes in flight per epoch. A watch event, a start or a reconnect opens a new epoch; reads it sets off
   * (children discovered on the way) stay in its epoch. */
  private readonly outstandingByEpoch = new Map<number, number>();
  private epoch = 0;
  private readonly settleWaiters = new Set<() => void>();
  private started = false;
  private closed = false;
  private unsubscribe: (() => void) | undefined;
  private readonly watcher = (event: WatchEvent): void => this.onWatch(event);

  constructor(
    private readonly registry: ZookeeperRegistryCenter,
    readonly root: string,
    logContext = `ElasticJob:TreeCache:${root}`,
    /** What to read of a node (default: data and children); 'ignore' leaves it out of the cache. */
    private readonly shape: (path: string) => { data: boolean; children: boolean } | 'ignore' = () => ({ data: true, children: true }),
  ) {
    this.logger = new Logger(logContext);
  }

  /** Loads the subtree and resolves once the first full read has settled. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.unsubscribe = this.registry.onStateChange((change) => this.onConnectionState(change));
    this.refresh(this.root, { data: true, children: true }, ++this.epoch);
    await this.settled();
  }

  close(): void {
    this.closed = true;
    this.unsubscribe?.();
    this.listeners.clear();
    this.nodes.clear();
    for (const wake of [...this.settleWaiters]) wake();
  }

  /** Listener errors are logged, never thrown into the cache. Returns an unsubscribe function. */
  listen(listener: (event: TreeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Resolves when every read set off by an event received so far has landed (with the reads those set off in
   * turn), so the cache reflects at least what ZooKeeper had told us at the call. Reads set off by later events
   * are not waited for: under steady churn the cache is never idle, and this must not wait for it to be.
   */
  settled(timeoutMs = 30_000): Promise<void> {
    const upTo = this.epoch;
    const pending = (): boolean => !this.closed && [...this.outstandingByEpoch.keys()].some((epoch) => epoch <= upTo);
    if (!pending()) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = (): void => {
        if (pending()) return;
        clearTimeout(timer);
        this.settleWaiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(() => {
        this.settleWaiters.delete(wake);
        this.logger.warn(`reads still outstanding after ${timeoutMs} ms; going on with what the cache has`);
        resolve();
      }, timeoutMs);
      this.settleWaiters.add(wake);
    });
  }

  private count(epoch: number, delta: number): void {
    const next = (this.outstandingByEpoch.get(epoch) ?? 0) + delta;
    if (next === 0) this.outstandingByEpoch.delete(epoch);
    else this.outstandingByEpoch.set(epoch, next);
  }

  has(path: string): boolean {
    return this.nodes.has(path);
  }

  /** Cached data as UTF-8, or undefined when the node is not there. */
  get(path: string): string | undefined {
    return this.nodes.get(path)?.data.toString('utf8');
  }

  /** Cached children names, unsorted; [] when the node is not there. */
  children(path: string): string[] {
    return [...(this.nodes.get(path)?.children ?? [])];
  }

  /** Every cached path, for diagnostics and tree dumps. */
  paths(): string[] {
    return [...this.nodes.keys()];
  }

  private onWatch(event: WatchEvent): void {
    if (this.closed || !(event.path === this.root || event.path.startsWith(`${this.root}/`))) return;
    const epoch = ++this.epoch;
    if (event.type === 'NODE_DELETED') {
      this.removeSubtree(event.path);
      if (event.path === this.root) this.refresh(this.root, { data: true, children: true }, epoch);
    } else if (event.type === 'NODE_CHILDREN_CHANGED') {
      this.refresh(event.path, { data: false, children: true }, epoch);
    } else {
      this.refresh(event.path, { data: true, children: event.type === 'NODE_CREATED' }, epoch);
    }
  }

  private onConnectionState(change: ConnectionStateChange): void {
    if (change.state !== 'RECONNECTED' || this.closed) return;
    // Watches may have been lost (new session) or events missed: re-read everything we know.
    const known = [...this.nodes.keys()];
    if (known.length === 0) known.push(this.root);
    const epoch = ++this.epoch;
    for (const path of known) this.refresh(path, { data: true, children: true }, epoch);
  }

  /** Serialized per path: a refresh asked for while one runs is merged into one more pass. */
  private refresh(path: string, asked: Pending, epoch: number): void {
    if (this.closed) return;
    const shape = this.shape(path);
    if (shape === 'ignore') return;
    // Ask only for what this node's shape reads; an event about a part it does not read (a directory's data)
    // re-reads what it does, which also tells whether the node still exists.
    const masked: Pending = { data: asked.data && shape.data, children: asked.children && shape.children };
    const what: Pending = masked.data || masked.children ? masked : { data: shape.data, children: shape.children };
    const running = this.inflight.get(path);
    if (running) {
      running.data ||= what.data;
      running.children ||= what.children;
      if (epoch < running.epoch) {
        // An older wave now depends on this refresh too.
        this.count(running.epoch, -1);
        this.count(epoch, 1);
        running.epoch = epoch;
      }
      return;
    }
    const pending: Inflight = { ...what, epoch };
    this.inflight.set(path, pending);
    this.count(epoch, 1);
    void this.runRefresh(path, pending).finally(() => {
      this.inflight.delete(path);
      this.count(pending.epoch, -1);
      for (const wake of [...this.settleWaiters]) wake();
    });
  }

  private async runRefresh(path: string, pending: Inflight): Promise<void> {
    try {
      const shape = this.shape(path);
      const wantsData = shape === 'ignore' || shape.data;
      const wantsChildren = shape === 'ignore' || shape.children;
      while (!this.closed && (pending.data || pending.children)) {
        const known = this.nodes.has(path);
        const readData = wantsData && (pending.data || !known);
        const readChildren = wantsChildren && (pending.children || !known);
        pending.data = false;
        pending.children = false;
        if (readData) {
          const node = await this.registry.getData(path, this.watcher);
          if (this.closed) return;
          if (!node) {
            this.removeSubtree(path);
            if (path === this.root) await this.registry.exists(path, this.watcher); // learn when it comes back
            return;
          }
          const previous = this.nodes.get(path);
          if (!previous) {
            this.nodes.set(path, { data: node.data, version: node.stat.version, children: new Set() });
            this.emit({ type: 'ADDED', path, data: node.data.toString('utf8') });
          } else if (previous.version !== node.stat.version || !previous.data.equals(node.data)) {
            previous.data = node.data;
            previous.version = node.stat.version;
            this.emit({ type: 'UPDATED', path, data: node.data.toString('utf8') });
          }
        }
        if (readChildren) {
          const children = await this.registry.getChildren(path, this.watcher);
          if (this.closed) return;
          if (children === undefined) {
            this.removeSubtree(path);
            if (path === this.root) await this.registry.exists(path, this.watcher);
            return;
          }
          if (!this.nodes.has(path)) {
            // A directory whose data we do not read: it exists, with empty data.
            this.nodes.set(path, { data: Buffer.alloc(0), version: 0, children: new Set() });
            this.emit({ type: 'ADDED', path, data: '' });
          }
          const cached = this.nodes.get(path)!;
          const now = new Set(children);
          for (const gone of [...cached.children].filter((child) => !now.has(child))) {
            cached.children.delete(gone);
            this.removeSubtree(`${path}/${gone}`);
          }
          for (const child of children) {
            // New, or listed before but never loaded (its first read failed on a connection loss).
            if (!cached.children.has(child) || !this.nodes.has(`${path}/${child}`)) {
              cached.children.add(child);
              this.refresh(`${path}/${child}`, { data: true, children: true }, pending.epoch);
            }
          }
        }
      }
    } catch (error) {
      const code = registryErrorCode(error);
      // Connection trouble: the reconnect handler re-reads the whole tree.
      if (code !== 'CONNECTION_LOSS' && code !== 'SESSION_EXPIRED' && code !== 'CLOSED') {
        this.logger.warn(`could not read ${path}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  /** Removes a node and its descendants, leaves first (ZooKeeper's own deletion order), one DELETED each. */
  private removeSubtree(path: string): void {
    const node = this.nodes.get(path);
    if (!node) return;
    for (const child of [...node.children]) this.removeSubtree(`${path}/${child}`);
    this.nodes.delete(path);
    const parent = this.nodes.get(path.slice(0, path.lastIndexOf('/')));
    parent?.children.delete(path.slice(path.lastIndexOf('/') + 1));
    this.emit({ type: 'DELETED', path, data: node.data.toString('utf8') });
  }

  private emit(event: TreeEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.logger.error(`listener failed on ${event.type} ${event.path}: ${error instanceof Error ? error.stack : String(error)}`);
      }
    }
  }
}
