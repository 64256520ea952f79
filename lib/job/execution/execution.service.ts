import type { TransactionOp } from '../../registry/registry.types.js';
import { registryErrorCode } from '../../errors/elastic-job.errors.js';
import { nodeNameProblem } from '../../registry/zookeeper-names.js';
import { mapBounded } from '../../registry/request-limits.js';
import type { JobConfiguration } from '../config/job-configuration.js';
import type { InstanceService } from '../instance/instance.service.js';
import type { JobContext } from '../context/job-context.js';
import { everyItem } from '../paths.js';

/**
 * Execution markers (ElasticJob's ExecutionService): `sharding/{i}/running` while an item runs (only with
 * `monitorExecution`; ephemeral, or persistent with `failover`) and `sharding/{i}/misfire`. Each firing writes
 * its markers in one transaction and removes them in one more: two requests per firing, no reads.
 */
export class ExecutionService {
  /** Items between registerJobBegin and registerJobCompleted here: what our own markers really mean. */
  private runningHere: Set<number> | undefined;
  /**
   * The data version of each marker we wrote for an item running here: it is removed only if still ours. Both made
   * for a firing and dropped when empty (an empty Set or Map is 150-180 bytes a job).
   */
  private markerVersions: Map<number, number> | undefined;

  constructor(
    private readonly ctx: JobContext,
    private readonly instances: InstanceService,
  ) {}

  /**
   * Whether a `running` marker means the item runs now: its owner must be online (markers of instances that are
   * gone are ignored), and when the owner is this instance, the item must be running here (a marker whose
   * removal failed on a connection loss is stale).
   */
  private isLiveMarker(item: number): boolean {
    const path = this.ctx.paths.running(item);
    if (this.ctx.storage.cached.isUnread(path)) {
      // A peer's marker whose owner we have not read: counts as live until we know (the read, started here,
      // lands as a cache event, so event-driven waits look again).
      void this.ctx.storage.cached.readUnread([path]).catch(() => undefined);
      return true;
    }
    const owner = this.ctx.storage.cached.get(path);
    if (owner === undefined || !this.instances.isInstanceOnline(owner)) return false;
    return owner !== this.ctx.instanceId || this.runsHere(item);
  }

  private runsHere(item: number): boolean {
    return this.runningHere !== undefined && this.runningHere.has(item);
  }

  private forgetRunning(items: readonly number[]): void {
    if (!this.runningHere) return;
    for (const item of items) this.runningHere.delete(item);
    if (this.runningHere.size === 0) this.runningHere = undefined;
  }

  /** Reads the owners of the markers of these items that we have not read (peers' markers are read lazily). */
  async readMarkerOwners(items: readonly number[]): Promise<void> {
    await this.ctx.storage.cached.readUnread(items.map((item) => this.ctx.paths.running(item)));
  }

  /** The items, among these, that run somewhere now (call readMarkerOwners first for an exact answer). */
  runningItems(items: readonly number[]): number[] {
    return items.filter((item) => this.isLiveMarker(item));
  }

  /** Whether any item of the job runs somewhere now (the leader waits for none before resharding). */
  hasLiveRunningItems(total: number): boolean {
    for (let item = 0; item < total; item++) if (this.isLiveMarker(item)) return true;
    return false;
  }

  /** Whether the cache shows a marker of ours for an item not running here (what removeStaleOwnMarkers removes). */
  hasStaleOwnMarkers(total: number): boolean {
    const { storage, paths, instanceId } = this.ctx;
    for (let item = 0; item < total; item++)
      if (storage.cached.get(paths.running(item)) === instanceId && !this.runsHere(item)) return true;
    return false;
  }

  /**
   * Whether the cache shows a running marker (read or not) of any of these items: with none, no item of them runs
   * anywhere (misfireIfHasRunningItems would read nothing and find nothing).
   */
  anyMarkerCached(items: readonly number[]): boolean {
    for (const item of items) if (this.ctx.storage.cached.has(this.ctx.paths.running(item))) return true;
    return false;
  }

  /** Removes our own markers of items not running here (their removal failed while disconnected). */
  async removeStaleOwnMarkers(total: number): Promise<void> {
    const { storage, paths, instanceId } = this.ctx;
    const stale: string[] = [];
    for (let item = 0; item < total; item++) {
      if (storage.cached.get(paths.running(item)) === instanceId && !this.runsHere(item))
        stale.push(paths.running(item));
    }
    if (stale.length === 0) return;
    this.ctx.logger.log(`removing ${stale.length} stale running marker(s) of ours`);
    await this.removeOwnMarkers(stale);
  }

  /**
   * Writes the running markers of these items and returns those now marked as ours: the items to run. A marker
   * already there is taken over only when ZooKeeper (not the cache, which may lag just after a reconnection) says
   * its owner is gone, with a setData conditioned on the version just read: two instances that both found the same
   * dead marker (a failover claim and the item's new owner after a reshard, at the same instant) cannot both take
   * it. The one that loses leaves the item to the other for this firing.
   */
  async registerJobBegin(items: readonly number[], config: JobConfiguration): Promise<number[]> {
    if (items.length > 0) {
      const runningHere = (this.runningHere ??= new Set());
      for (const item of items) runningHere.add(item);
    }
    if (!config.monitorExecution || items.length === 0) return [...items];
    const won: number[] = [];
    try {
      // Most plans come from the cache, without a promise each; the reads some need (a marker already there) are
      // bounded.
      const ops =
        this.markerCreatesFromCache(items, config) ?? (await mapBounded(items, (item) => this.markerOp(item, config)));
      const planned = ops.includes(undefined)
        ? ops.filter((op): op is TransactionOp => op !== undefined)
        : (ops as readonly TransactionOp[]);
      const written = await this.writeWhatStillApplies(planned);
      // Every op written (the steady state) comes back as `planned` itself: no Set of them to look up.
      const writtenSet = written === planned ? undefined : new Set(written);
      for (let index = 0; index < items.length; index++) {
        const op = ops[index];
        if (op === undefined || (writtenSet !== undefined && !writtenSet.has(op))) continue;
        won.push(items[index]!);
        (this.markerVersions ??= new Map()).set(items[index]!, writtenVersion(op));
      }
    } finally {
      if (won.length < items.length) this.forgetRunning(items.filter((item) => !won.includes(item)));
    }
    if (won.length < items.length) {
      const lost = items.filter((item) => !won.includes(item));
      this.ctx.logger.warn(`items [${lost.join(',')}] are being run by another instance: not run here this time`);
    }
    return won;
  }

  /** The steady state's plans: the cache shows no marker of any of these items, so each is a create. */
  private markerCreatesFromCache(items: readonly number[], config: JobConfiguration): TransactionOp[] | undefined {
    const { storage, paths, instanceId } = this.ctx;
    const ops: TransactionOp[] = [];
    for (const item of items) {
      const path = paths.running(item);
      if (storage.cached.has(path)) return undefined;
      ops.push(storage.createOp(path, instanceId, config.failover ? 'PERSISTENT' : 'EPHEMERAL'));
    }
    return ops;
  }

  /** The op that makes an item's marker ours; undefined when a live instance holds it. */
  private async markerOp(item: number, config: JobConfiguration): Promise<TransactionOp | undefined> {
    const { storage, paths, instanceId } = this.ctx;
    const path = paths.running(item);
    const create = storage.createOp(path, instanceId, config.failover ? 'PERSISTENT' : 'EPHEMERAL');
    // The cache shows no marker (the steady state): a create, which fails if someone holds the item after all.
    if (!storage.cached.has(path)) return create;
    // A marker is there (a transition: crash, reshard, reconnection): two direct reads decide.
    const marker = await storage.direct.node(path);
    if (!marker) return create;
    const owner = marker.data.toString('utf8');
    if (nodeNameProblem(owner) !== undefined) {
      // Empty (zkCli, ElasticJob before 3.0.2) or garbage: it names no instance, so nobody runs the item by it.
      this.ctx.logger.warn(
        `${storage.fullPath(path)} names no instance ('${owner.slice(0, 40)}'): treated as absent, taking the item`,
      );
    } else if (owner !== instanceId && (await storage.direct.exists(paths.instance(owner))) !== undefined) {
      return undefined;
    }
    // Left by an instance that is gone (docs/reference/elasticjob.md §8 #49, #467, #1754): take it over unless it
    // changes meanwhile.
    return { op: 'setData', path, data: Buffer.from(instanceId, 'utf8'), version: marker.stat.version };
  }

  /**
   * Not an async function: the steady state's removal is the write's own promise (an async frame and its await at
   * each of the layers below were ~500 bytes each of a burst's item start, docs/benchmarks.md, issue 43).
   */
  registerJobCompleted(items: readonly number[], config: JobConfiguration): Promise<unknown> {
    this.forgetRunning(items);
    const versions = items.map((item) => this.markerVersions?.get(item));
    if (this.markerVersions) {
      for (const item of items) this.markerVersions.delete(item);
      if (this.markerVersions.size === 0) this.markerVersions = undefined;
    }
    if (!config.monitorExecution || items.length === 0) return Promise.resolve();
    return this.removeOwnMarkers(
      items.map((item) => this.ctx.paths.running(item)),
      versions,
    );
  }

  /** If any item still runs somewhere, flag all of them misfired and say so. */
  async misfireIfHasRunningItems(items: readonly number[]): Promise<boolean> {
    await this.readMarkerOwners(items);
    if (this.runningItems(items).length === 0) return false;
    await this.setMisfire(items);
    return true;
  }

  async setMisfire(items: readonly number[]): Promise<void> {
    const { storage, paths } = this.ctx;
    const missing = items.filter((item) => !storage.cached.has(paths.misfire(item)));
    if (missing.length === 0) return;
    try {
      await storage.transaction(
        missing.map((item) => storage.createOp(paths.misfire(item), '')),
        { batches: true },
      );
    } catch (error) {
      if (registryErrorCode(error) !== 'NODE_EXISTS' && registryErrorCode(error) !== 'NO_NODE') throw error;
      await mapBounded(missing, (item) => storage.createOrKeep(paths.misfire(item)));
    }
  }

  getMisfiredItems(items: readonly number[]): number[] {
    return items.filter((item) => this.ctx.storage.cached.has(this.ctx.paths.misfire(item)));
  }

  async clearMisfire(items: readonly number[]): Promise<void> {
    await this.removeMarkers(items.map((item) => this.ctx.paths.misfire(item)));
  }

  /**
   * Removes this instance's `running` markers (shutdown, new session). On a new session a firing may already have
   * started an item on it (same instance id): `keepRunningHere` leaves the markers of items running here now.
   */
  async clearOwnRunningInfo(total: number, { keepRunningHere = false } = {}): Promise<void> {
    const items = everyItem(total).filter((item) => !keepRunningHere || !this.runsHere(item));
    await this.removeOwnMarkers(items.map((item) => this.ctx.paths.running(item)));
  }

  /** monitorExecution switched off: every `running` marker goes (ElasticJob's MonitorExecution listener). */
  async removeAllRunningMarkers(total: number): Promise<void> {
    await this.ctx.storage.remove(
      everyItem(total).map((item) => this.ctx.paths.running(item)),
      { onlyCached: true },
    );
  }

  /**
   * Removes these running markers where they are still ours, each conditioned on its version (as written by us, or
   * else as read directly now): a marker a peer has taken over meanwhile (it judged us gone) stays the peer's.
   */
  private removeOwnMarkers(paths: readonly string[], versions?: ReadonlyArray<number | undefined>): Promise<unknown> {
    // Every version known (the steady state, this firing's own markers): the ops without a promise each.
    if (versions !== undefined && versions.every((version) => version !== undefined))
      return this.writeWhatStillApplies(
        paths.map((path, index): TransactionOp => ({ op: 'remove', path, version: versions[index] })),
      );
    return this.removeMarkersReadFirst(paths, versions);
  }

  /** removeOwnMarkers where some version is not known: those markers read first. */
  private async removeMarkersReadFirst(
    paths: readonly string[],
    versions?: ReadonlyArray<number | undefined>,
  ): Promise<void> {
    const { storage, instanceId } = this.ctx;
    const ops = await mapBounded(everyItem(paths.length), async (index): Promise<TransactionOp | undefined> => {
      const path = paths[index]!;
      const known = versions?.[index];
      if (known !== undefined) return { op: 'remove', path, version: known };
      // Not written by us in this run (a stale marker, a new session): read who holds it now.
      const marker = await storage.direct.node(path);
      return marker?.data.toString('utf8') === instanceId
        ? { op: 'remove', path, version: marker.stat.version }
        : undefined;
    });
    await this.writeWhatStillApplies(ops.filter((op): op is TransactionOp => op !== undefined));
  }

  /**
   * Marker ops in one transaction (or as few as ZooKeeper's request limit allows); when another instance's write
   * got in the way of one of them (it created, took over or removed that marker meanwhile), that request's ops one
   * by one, keeping those that still apply. Returns the ops written: `ops` itself when all of them were.
   */
  private writeWhatStillApplies(ops: readonly TransactionOp[]): Promise<readonly TransactionOp[]> {
    try {
      const batches = this.ctx.storage.multiBatches(ops);
      if (batches.length === 1) return this.writeBatchWhatStillApplies(batches[0]!);
      return this.writeBatchesWhatStillApply(batches);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private async writeBatchesWhatStillApply(batches: readonly TransactionOp[][]): Promise<TransactionOp[]> {
    const written: TransactionOp[] = [];
    for (const batch of batches) written.push(...(await this.writeBatchWhatStillApplies(batch)));
    return written;
  }

  private writeBatchWhatStillApplies(ops: readonly TransactionOp[]): Promise<readonly TransactionOp[]> {
    // Sent with the other jobs' markers of this instant: a thousand jobs firing at one second write theirs in a few
    // requests (registry/transaction-coalescer.ts).
    return this.ctx.storage.transaction(ops, COALESCED).then(
      () => ops,
      (error: unknown) => this.writeOneByOne(ops, error),
    );
  }

  /** After a conflict in a request of marker ops: each op alone, keeping those that still apply. */
  private async writeOneByOne(ops: readonly TransactionOp[], conflict: unknown): Promise<TransactionOp[]> {
    if (!isMarkerConflict(conflict)) throw conflict;
    const written: TransactionOp[] = [];
    for (const op of ops) {
      try {
        await this.ctx.storage.transaction([op]);
        written.push(op);
      } catch (error) {
        // NO_NODE on a create is a missing parent, not someone else's doing.
        if (!isMarkerConflict(error) || (registryErrorCode(error) === 'NO_NODE' && op.op === 'create')) throw error;
      }
    }
    return written;
  }

  /** One transaction (or as few as the request limit allows); if a marker vanished meanwhile, one by one. */
  private async removeMarkers(paths: string[]): Promise<void> {
    if (paths.length === 0) return;
    try {
      await this.ctx.storage.transaction(
        paths.map((path) => ({ op: 'remove', path })),
        { batches: true },
      );
    } catch (error) {
      if (registryErrorCode(error) !== 'NO_NODE') throw error;
      await this.ctx.storage.remove(paths);
    }
  }
}

/** The marker writes share a request with the other jobs' of this tick. */
const COALESCED = { coalesce: true } as const;

/** A marker someone else created, took over or removed between our look and our write. */
function isMarkerConflict(error: unknown): boolean {
  const code = registryErrorCode(error);
  return code === 'NODE_EXISTS' || code === 'BAD_VERSION' || code === 'NO_NODE';
}

/** The version a marker op leaves the marker at: 0 for a create, one more than the condition for a setData. */
function writtenVersion(op: TransactionOp): number {
  return op.op === 'setData' && op.version !== undefined ? op.version + 1 : 0;
}
