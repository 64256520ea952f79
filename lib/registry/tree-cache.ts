import { Logger } from '@nestjs/common';
import { describeError, isConnectionTrouble, registryErrorCode } from '../errors/elastic-job.errors.js';
import type { RegistryCenter } from './registry-center.js';
import type { ConnectionStateChange, NodeData, WatchEvent } from './registry.types.js';
import { MAX_CONCURRENT_REQUESTS, RequestSlots } from './request-limits.js';
import { StepQueue } from './step-queue.js';
import { intern } from '../util/intern.js';
import { settlesWithin } from '../util/deferred.js';
import { type CachedNode, withChild, withoutChild } from './cached-node.js';
import { EMPTY, type Observed, readSubtree, type SnapshotNode } from './tree-snapshot.js';

export type TreeEventType = 'ADDED' | 'UPDATED' | 'DELETED';

/** ElasticJob's `DataChangedEvent`: data is UTF-8, '' when empty; for DELETED it is the last known data. */
export interface TreeEvent {
  type: TreeEventType;
  path: string;
  data: string;
}

/**
 * What to read of a node: its data, its children; 'ignore' leaves it (and what is below it) out of the cache.
 * `data: 'lazy'`: the data is read only when someone asks (readUnread), not when the node appears; our own
 * creates are known anyway. For nodes that come and go often and whose data matters rarely.
 */
export type NodeShape = { data: boolean | 'lazy'; children: boolean } | 'ignore';

/** Reads one cache keeps in flight at most (a job's tree is a few dozen nodes unless it has thousands of items). */
const MAX_CONCURRENT_READS = 4 * MAX_CONCURRENT_REQUESTS;

type Lifecycle = 'LATENT' | 'STARTED' | 'CLOSED';

/**
 * A local mirror of one subtree (ElasticJob's CuratorCache, same model): one persistent recursive watch on the
 * root (ZooKeeper 3.6+ `addWatch`, as CuratorCache does), a full read after each time the watch is added (start
 * and every reconnection, since events are not replayed), then one step per watch event, applied in the order
 * ZooKeeper sent them: NODE_DELETED removes, NODE_CREATED and NODE_DATA_CHANGED read the node's data, except
 * - for directories whose data nothing reads (they are added as they are announced), and
 * - for nodes this process has just created itself (write-through: we know their data, version 0).
 * So a steady-state firing, whose only writes are our own markers, reads nothing from ZooKeeper (docs/SPEC.md §4.8).
 *
 * Reads set off by events run concurrently, and their results are applied in event order; a read answer older
 * than what is cached (by mzxid) is dropped. Listeners get ADDED / UPDATED / DELETED per node.
 */
export class TreeCache {
  private readonly logger: Logger;
  /** Keys interned (see util/intern.ts): the paths of a job's skeleton are the same strings as its JobNodePath's. */
  private readonly nodes = new Map<string, CachedNode>();
  /** Replaced, never changed in place: an event walks the array it found without copying it. */
  private listeners: ReadonlyArray<(event: TreeEvent) => void> = [];
  /** Reads of lazy nodes in flight, by path (readUnread). */
  private lazyReads: Map<string, Promise<void>> | undefined;
  /** Our own creates in flight, by path: the CREATED event they cause needs no read. Made when first needed. */
  private ownCreates: Map<string, { data: Buffer; created: Promise<boolean> }> | undefined;
  /** Each step applies after the previous one, whatever order their reads come back in; skipped unless started. */
  private readonly steps = new StepQueue(() => this.lifecycle === 'STARTED');
  /** The addWatch and full read after a (re)connection, while in flight. */
  private resync: Promise<void> | undefined;
  private resyncGeneration = 0;
  /** The watch is in place on this connection and the subtree was read since. */
  private synced = false;
  private lifecycle: Lifecycle = 'LATENT';
  private unsubscribe: (() => void) | undefined;
  private readonly watcher = (event: WatchEvent): void => this.onWatch(event);
  /** A tree of many thousand items is read a bounded number of nodes at a time. */
  private readonly readSlots = new RequestSlots(MAX_CONCURRENT_READS);

  constructor(
    private readonly registry: RegistryCenter,
    readonly root: string,
    /** A logger, or the context of one made for this cache (a job's cache logs with the job's own logger). */
    logger: Logger | string = `ElasticJob:TreeCache:${root}`,
    private readonly shape: (path: string) => NodeShape = () => ({ data: true, children: true }),
  ) {
    this.logger = typeof logger === 'string' ? new Logger(logger) : logger;
  }

  /**
   * Adds the watch and loads the subtree; resolves once the load is applied. Rejects on connection trouble
   * (call again to retry); after that, reconnections re-sync on their own.
   */
  async start(): Promise<void> {
    if (this.lifecycle === 'CLOSED') return;
    if (this.lifecycle === 'LATENT') {
      this.lifecycle = 'STARTED';
      this.unsubscribe = this.registry.onStateChange((change) => this.onConnectionState(change));
    }
    if (!this.synced) await (this.resync ?? this.startResync());
    await this.settled();
  }

  close(): void {
    if (this.lifecycle === 'CLOSED') return;
    this.lifecycle = 'CLOSED';
    this.unsubscribe?.();
    this.registry.removePersistentRecursiveWatch(this.root, this.watcher);
    this.listeners = [];
    this.nodes.clear();
    this.ownCreates = undefined;
  }

  /** Listener errors are logged, never thrown into the cache. Returns an unsubscribe function. */
  listen(listener: (event: TreeEvent) => void): () => void {
    if (!this.listeners.includes(listener)) this.listeners = this.listeners.concat(listener);
    return () => {
      this.listeners = this.listeners.filter((other) => other !== listener);
    };
  }

  /**
   * Resolves when every step for an event received so far (and a re-sync under way) has been applied, so the
   * cache reflects at least what ZooKeeper had told us at the call. Later events are not waited for.
   */
  async settled(timeoutMs = 30_000): Promise<void> {
    if (this.lifecycle === 'CLOSED') return;
    const resync = this.resync;
    // Nothing outstanding (most calls: a job's start-up asks about ten times): no timer, no race of promises.
    if (!resync && !this.steps.busy) return;
    const done = (resync ? resync.catch(() => undefined) : Promise.resolve()).then(() => this.steps.idle());
    if (!(await settlesWithin(done, timeoutMs)))
      this.logger.warn(`reads still outstanding after ${timeoutMs} ms; going on with what the cache has`);
  }

  /**
   * Write-through: the caller is about to create these nodes; once `outcome` succeeds their data is known, so
   * the NODE_CREATED events they cause are applied without reading. Call before sending the write.
   */
  expectOwnCreates(creates: ReadonlyArray<{ path: string; data: Buffer }>, outcome: Promise<unknown>): void {
    if (this.lifecycle !== 'STARTED') return;
    const created = outcome.then(
      () => true,
      () => false,
    );
    let expected = false;
    for (const { path, data } of creates) {
      if (!this.isInTree(path)) continue;
      (this.ownCreates ??= new Map()).set(path, { data, created });
      expected = true;
    }
    if (!expected) return;
    // Normally the event has taken each entry by the time the answer comes (ZooKeeper sends the notification
    // first); without a watch in place (reconnecting) no event comes. One callback for the write's creates: an
    // entry of this write is the one holding its `created`.
    void created.then(() => {
      for (const { path } of creates) if (this.ownCreates?.get(path)?.created === created) this.forgetOwnCreate(path);
    });
  }

  has(path: string): boolean {
    return this.nodes.has(path);
  }

  /** The root or below it (asked of every event: no string built). */
  private isInTree(path: string): boolean {
    return (
      path === this.root ||
      (path.length > this.root.length && path.charCodeAt(this.root.length) === 47 && path.startsWith(this.root))
    );
  }

  /**
   * Cached data as UTF-8, or undefined when the node is not there (or is a lazy node not read yet): the same string
   * until the node's data changes (cheap to compare: callers may key a parse on it).
   */
  get(path: string): string | undefined {
    return this.nodes.get(path)?.data;
  }

  /** The cached node's data version (0 for our own creates), undefined when it is not cached or not read. */
  version(path: string): number | undefined {
    const node = this.nodes.get(path);
    return node?.data === undefined ? undefined : node.version;
  }

  /** Whether the node is cached without its data (a lazy node nobody has asked about). */
  isUnread(path: string): boolean {
    const node = this.nodes.get(path);
    return node !== undefined && node.data === undefined;
  }

  /**
   * Reads the data of those nodes that are cached unread, and resolves once it is applied (an UPDATED event
   * each). Concurrent calls for a path share one read.
   */
  async readUnread(paths: readonly string[]): Promise<void> {
    await Promise.all(
      paths
        .filter((path) => this.isUnread(path))
        .map((path) => {
          const lazyReads = (this.lazyReads ??= new Map());
          let reading = lazyReads.get(path);
          if (!reading) {
            reading = this.enqueueRead(path).finally(() => {
              lazyReads.delete(path);
              if (lazyReads.size === 0 && this.lazyReads === lazyReads) this.lazyReads = undefined;
            });
            lazyReads.set(path, reading);
          }
          return reading;
        }),
    );
  }

  /** Cached children names, unsorted; [] when the node is not there. */
  children(path: string): string[] {
    const children = this.nodes.get(path)?.children;
    return children ? [...children] : [];
  }

  /** Whether a cached child's name passes `test` (no copy of the children: asked at every firing). */
  someChild(path: string, test: (name: string) => boolean): boolean {
    const children = this.nodes.get(path)?.children;
    if (children) for (const name of children) if (test(name)) return true;
    return false;
  }

  /** How many children are cached. */
  childCount(path: string): number {
    const children = this.nodes.get(path)?.children;
    return children === undefined ? 0 : children instanceof Set ? children.size : children.length;
  }

  /** Every cached path, for diagnostics and tree dumps. */
  paths(): string[] {
    return [...this.nodes.keys()];
  }

  // ---------------------------------------------------------------- re-sync: watch, then a full read

  private onConnectionState(change: ConnectionStateChange): void {
    if (change.state !== 'RECONNECTED' || this.lifecycle !== 'STARTED') return;
    this.synced = false;
    void this.startResync().catch((error: unknown) => {
      // More connection trouble: the next reconnection tries again.
      if (!isConnectionTrouble(error)) this.logger.warn(`could not re-sync ${this.root}: ${describeError(error)}`);
    });
  }

  private startResync(): Promise<void> {
    const generation = ++this.resyncGeneration;
    const resync = (async () => {
      try {
        await this.registry.addPersistentRecursiveWatch(this.root, this.watcher);
      } catch (error) {
        const code = registryErrorCode(error);
        if (!isConnectionTrouble(error)) {
          this.logger.error(
            `ZooKeeper refused a persistent recursive watch on ${this.root} (${code}): ZooKeeper 3.6 or later is ` +
              `required`,
          );
        }
        throw error;
      }
      // Reads start now, after the watch is in place; events arriving meanwhile are applied after the snapshot.
      const snapshot = readSubtree(this.root, {
        shape: this.shape,
        read: (path) => this.read(path),
        exists: (path) => this.bounded(() => this.registry.exists(path)).then((stat) => stat !== undefined),
        children: (path) =>
          this.bounded(() => this.registry.readMany([{ path, what: 'children' }])).then(
            ([children]) => children as string[] | undefined,
          ),
        holdsData: (path) => this.nodes.get(path)?.data !== undefined,
      });
      snapshot.catch(() => undefined); // handled now: at a close the step below is skipped, never awaiting it
      await this.steps.run(async () => this.applySnapshot(await snapshot));
      if (this.resyncGeneration === generation) this.synced = true;
    })();
    this.resync = resync;
    const clear = (): void => {
      if (this.resyncGeneration === generation) this.resync = undefined;
    };
    resync.then(clear, clear);
    return resync;
  }

  private applySnapshot(snapshot: Map<string, SnapshotNode>): void {
    // Gone while we were not watching: leaves first, as ZooKeeper deletes.
    for (const path of [...this.nodes.keys()].sort((a, b) => b.length - a.length)) {
      if (!snapshot.has(path)) this.removeSubtree(path);
    }
    // Parents before children (Map order is the visit order: a parent is set before its children are read).
    for (const [path, { node, children, unread }] of snapshot) {
      if (unread) this.markUnread(path);
      else this.applyNode(path, node, true);
      const cached = this.nodes.get(path);
      if (!cached) continue;
      const listed = new Set(children);
      for (const gone of [...(cached.children ?? [])].filter(
        (child) => !listed.has(child) || !snapshot.has(`${path}/${child}`),
      )) {
        this.removeSubtree(`${path}/${gone}`);
      }
    }
  }

  // ---------------------------------------------------------------- events

  private onWatch(event: WatchEvent): void {
    if (this.lifecycle !== 'STARTED') return;
    const { path } = event;
    if (!this.isInTree(path)) return;
    const shape = this.shape(path);
    if (shape === 'ignore') return;
    if (event.type === 'NODE_DELETED') {
      this.steps.push(() => this.removeSubtree(path));
      return;
    }
    if (event.type !== 'NODE_CREATED' && event.type !== 'NODE_DATA_CHANGED') return;
    const own = event.type === 'NODE_CREATED' ? this.ownCreates?.get(path) : undefined;
    if (own) {
      this.forgetOwnCreate(path);
      // When our create failed, someone else's made the node (peers setting a job up together): read only what we
      // read of a node anyway; a directory's creation says all there is (12 reads a job for every peer that lost).
      const observed = own.created.then((ok): Observed | Promise<Observed> => {
        if (ok) return { data: own.data, version: 0, mzxid: 0n };
        return shape.data ? this.read(path) : { data: EMPTY, version: 0, mzxid: 0n };
      });
      this.steps.push(this.applyStep(path, observed));
    } else if (shape.data === 'lazy') {
      // Known to exist; its data is read when someone asks.
      this.steps.push(() => this.markUnread(path));
    } else if (!shape.data) {
      // A directory: nothing reads its data; that it was created is all there is to know.
      if (event.type === 'NODE_DATA_CHANGED') return;
      this.steps.push(() => this.applyNode(path, { data: EMPTY, version: 0, mzxid: 0n }, false));
    } else {
      this.steps.push(this.applyStep(path, this.read(path)));
    }
  }

  private enqueueRead(path: string): Promise<void> {
    return this.steps.run(this.applyStep(path, this.read(path)));
  }

  private forgetOwnCreate(path: string): void {
    this.ownCreates?.delete(path);
    if (this.ownCreates?.size === 0) this.ownCreates = undefined;
  }

  /** The step that applies a node as read (or known), queued in event order. */
  private applyStep(path: string, observed: Promise<Observed>): () => Promise<void> {
    // Handled now: a step dropped at close never runs, and its read (sent at the next tick, after the close) rejects.
    observed.catch(() => undefined);
    return () =>
      observed.then(
        (node) => {
          if (node === undefined)
            this.removeSubtree(path); // deleted since: its own event follows
          else this.applyNode(path, node, false);
        },
        (error: unknown) => {
          // A read lost to connection trouble: the re-sync after reconnection reads everything again.
          if (!isConnectionTrouble(error)) this.logger.warn(`could not read ${path}: ${describeError(error)}`);
        },
      );
  }

  /** A lazy node appeared or changed: present, data unknown until asked for. */
  private markUnread(path: string): void {
    const previous = this.nodes.get(path);
    if (previous) {
      previous.data = undefined;
      return;
    }
    if (!this.linkToParent(path)) return;
    this.nodes.set(intern(path), { data: undefined, version: -1, mzxid: 0n, children: undefined });
    this.emit({ type: 'ADDED', path, data: '' });
  }

  /** Adds the node to its cached parent's children; false when the parent is not cached or does not list children. */
  private linkToParent(path: string): boolean {
    if (path === this.root) return true;
    const parentPath = path.slice(0, path.lastIndexOf('/'));
    const parent = this.nodes.get(parentPath);
    const parentShape = this.shape(parentPath);
    if (!parent || parentShape === 'ignore' || !parentShape.children) return false;
    const name = path.slice(path.lastIndexOf('/') + 1);
    parent.children = withChild(parent.children, name);
    return true;
  }

  /** Through readMany: the reads of every cache in a tick share multiRead requests (read-coalescer.ts). */
  private async read(path: string): Promise<Observed> {
    const [answer] = await this.bounded(() => this.registry.readMany([{ path, what: 'data' }]));
    const node = answer as NodeData | undefined;
    return node && { data: node.data, version: node.stat.version, mzxid: node.stat.mzxid };
  }

  private bounded<T>(read: () => Promise<T>): Promise<T> {
    return this.readSlots.run(read);
  }

  private applyNode(path: string, node: NonNullable<Observed>, fromSnapshot: boolean): void {
    const previous = this.nodes.get(path);
    if (!previous) {
      // Only below a cached parent that lists its children (the same nodes a read of the tree would find).
      if (!this.linkToParent(path)) return;
      const data = node.data.toString('utf8');
      this.nodes.set(intern(path), { data, version: node.version, mzxid: node.mzxid, children: undefined });
      this.emit({ type: 'ADDED', path, data });
      return;
    }
    // An answer older than what we have (reads race each other around a re-sync) is dropped.
    if (!fromSnapshot && node.mzxid !== 0n && node.mzxid < previous.mzxid) return;
    const data = node.data.toString('utf8');
    const changed = previous.data === undefined || previous.version !== node.version || previous.data !== data;
    // Unchanged: the string kept is the one readers have (so a parse keyed on it stays valid).
    if (changed || previous.data === undefined) previous.data = data;
    previous.version = node.version;
    previous.mzxid = node.mzxid;
    if (changed) this.emit({ type: 'UPDATED', path, data });
  }

  /** Removes a node and its descendants, leaves first (ZooKeeper's own deletion order), one DELETED each. */
  private removeSubtree(path: string): void {
    const node = this.nodes.get(path);
    if (!node) return;
    if (node.children) for (const child of [...node.children]) this.removeSubtree(`${path}/${child}`);
    this.nodes.delete(path);
    const parent = this.nodes.get(path.slice(0, path.lastIndexOf('/')));
    if (parent?.children) parent.children = withoutChild(parent.children, path.slice(path.lastIndexOf('/') + 1));
    this.emit({ type: 'DELETED', path, data: node.data ?? '' });
  }

  private emit(event: TreeEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.logger.error(
          `listener failed on ${event.type} ${event.path}: ${error instanceof Error ? error.stack : String(error)}`,
        );
      }
    }
  }
}
