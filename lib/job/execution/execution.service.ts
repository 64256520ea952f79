import type { TransactionOp } from '../../registry/registry.types.js';
import { registryErrorCode } from '../../registry/zookeeper-registry-center.js';
import type { JobConfiguration } from '../config/job-configuration.js';
import type { InstanceService } from '../instance/instance.service.js';
import type { JobContext } from '../job-context.js';
import { everyItem } from '../paths.js';

/**
 * Execution markers (ElasticJob's ExecutionService): `sharding/{i}/running` while an item runs (only with
 * `monitorExecution`; ephemeral, or persistent with `failover`) and `sharding/{i}/misfire`. Each firing writes
 * its markers in one transaction and removes them in one more: two requests per firing, no reads.
 */
export class ExecutionService {
  /** Items between registerJobBegin and registerJobCompleted here: what our own markers really mean. */
  private readonly runningHere = new Set<number>();

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
    if (this.ctx.storage.isUnread(path)) {
      // A peer's marker whose owner we have not read: counts as live until we know (the read, started here,
      // lands as a cache event, so event-driven waits look again).
      void this.ctx.storage.readUnread([path]).catch(() => undefined);
      return true;
    }
    const owner = this.ctx.storage.get(path);
    if (owner === undefined || !this.instances.isInstanceOnline(owner)) return false;
    return owner !== this.ctx.instanceId || this.runningHere.has(item);
  }

  /** Reads the owners of the markers of these items that we have not read (peers' markers are read lazily). */
  async readMarkerOwners(items: readonly number[]): Promise<void> {
    await this.ctx.storage.readUnread(items.map((item) => this.ctx.paths.running(item)));
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

  /** Removes our own markers of items not running here (their removal failed while disconnected). */
  async removeStaleOwnMarkers(total: number): Promise<void> {
    const { storage, paths, instanceId } = this.ctx;
    const stale: string[] = [];
    for (let item = 0; item < total; item++) {
      if (storage.get(paths.running(item)) === instanceId && !this.runningHere.has(item)) stale.push(paths.running(item));
    }
    if (stale.length === 0) return;
    this.ctx.logger.log(`removing ${stale.length} stale running marker(s) of ours`);
    await this.removeMarkers(stale);
  }

  /**
   * Writes the running markers of these items and returns those now marked as ours: the items to run. A marker
   * already there is taken over only when ZooKeeper (not the cache, which may lag just after a reconnection) says
   * its owner is gone, with a setData conditioned on the version just read: two instances that both found the same
   * dead marker (a failover claim and the item's new owner after a reshard, at the same instant) cannot both take
   * it. The one that loses leaves the item to the other for this firing.
   */
  async registerJobBegin(items: readonly number[], config: JobConfiguration): Promise<number[]> {
    for (const item of items) this.runningHere.add(item);
    if (!config.monitorExecution || items.length === 0) return [...items];
    const { storage } = this.ctx;
    let won: number[] = [];
    try {
      const plans = new Map<number, TransactionOp>();
      const ops = await Promise.all(items.map((item) => this.markerOp(item, config)));
      items.forEach((item, index) => {
        const op = ops[index];
        if (op) plans.set(item, op);
      });
      try {
        await storage.transaction([...plans.values()]);
        won = [...plans.keys()];
      } catch (error) {
        if (!isMarkerConflict(error)) throw error;
        // Someone got there first for at least one item: keep the others.
        for (const [item, op] of plans) {
          try {
            await storage.transaction([op]);
            won.push(item);
          } catch (itemError) {
            // NO_NODE on a create is a missing parent, not someone else's doing.
            if (!isMarkerConflict(itemError) || (registryErrorCode(itemError) === 'NO_NODE' && op.op === 'create')) throw itemError;
          }
        }
      }
    } finally {
      for (const item of items) if (!won.includes(item)) this.runningHere.delete(item);
    }
    const lost = items.filter((item) => !won.includes(item));
    if (lost.length > 0) this.ctx.logger.warn(`items [${lost.join(',')}] are being run by another instance: not run here this time`);
    return won;
  }

  /** The op that makes an item's marker ours; undefined when a live instance holds it. */
  private async markerOp(item: number, config: JobConfiguration): Promise<TransactionOp | undefined> {
    const { storage, registry, paths, instanceId } = this.ctx;
    const path = paths.running(item);
    const create = storage.createOp(path, instanceId, config.failover ? 'PERSISTENT' : 'EPHEMERAL');
    // The cache shows no marker (the steady state): a create, which fails if someone holds the item after all.
    if (!storage.has(path)) return create;
    // A marker is there (a transition: crash, reshard, reconnection): two direct reads decide.
    const marker = await registry.getData(path);
    if (!marker) return create;
    const owner = marker.data.toString('utf8');
    if (owner !== instanceId && (await registry.exists(paths.instance(owner))) !== undefined) return undefined;
    // Left by an instance that is gone (EJ §8 #49, #467, #1754): take it over unless it changes meanwhile.
    return { op: 'setData', path, data: Buffer.from(instanceId, 'utf8'), version: marker.stat.version };
  }

  async registerJobCompleted(items: readonly number[], config: JobConfiguration): Promise<void> {
    for (const item of items) this.runningHere.delete(item);
    if (!config.monitorExecution || items.length === 0) return;
    await this.removeMarkers(items.map((item) => this.ctx.paths.running(item)));
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
    const missing = items.filter((item) => !storage.has(paths.misfire(item)));
    if (missing.length === 0) return;
    try {
      await storage.transaction(missing.map((item) => storage.createOp(paths.misfire(item), '')));
    } catch (error) {
      if (registryErrorCode(error) !== 'NODE_EXISTS' && registryErrorCode(error) !== 'NO_NODE') throw error;
      await Promise.all(missing.map((item) => storage.createIfNeeded(paths.misfire(item))));
    }
  }

  getMisfiredItems(items: readonly number[]): number[] {
    return items.filter((item) => this.ctx.storage.has(this.ctx.paths.misfire(item)));
  }

  async clearMisfire(items: readonly number[]): Promise<void> {
    await this.removeMarkers(items.map((item) => this.ctx.paths.misfire(item)));
  }

  /** Removes this instance's `running` markers (shutdown, new session). */
  async clearOwnRunningInfo(total: number): Promise<void> {
    const { storage, paths, instanceId } = this.ctx;
    // Direct reads (the cache may be behind on a new session), all at once rather than one item after another.
    const markers = everyItem(total).map((item) => paths.running(item));
    const owners = await Promise.all(markers.map((path) => storage.getDirectly(path)));
    await this.removeMarkers(markers.filter((_, index) => owners[index] === instanceId));
  }

  /** monitorExecution switched off: every `running` marker goes (ElasticJob's MonitorExecution listener). */
  async removeAllRunningMarkers(total: number): Promise<void> {
    await this.ctx.storage.removeCached(everyItem(total).map((item) => this.ctx.paths.running(item)));
  }

  /** One transaction; if a marker vanished meanwhile, one by one. */
  private async removeMarkers(paths: string[]): Promise<void> {
    if (paths.length === 0) return;
    try {
      await this.ctx.storage.transaction(paths.map((path) => ({ op: 'remove', path })));
    } catch (error) {
      if (registryErrorCode(error) !== 'NO_NODE') throw error;
      await Promise.all(paths.map((path) => this.ctx.storage.remove(path)));
    }
  }
}

/** A marker someone else created, took over or removed between our look and our write. */
function isMarkerConflict(error: unknown): boolean {
  const code = registryErrorCode(error);
  return code === 'NODE_EXISTS' || code === 'BAD_VERSION' || code === 'NO_NODE';
}
