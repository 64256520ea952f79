import { registryErrorCode } from '../../errors/elastic-job.errors.js';
import type { JobInstance } from '../../interfaces/sharded-job-options.interface.js';
import type { TransactionOp } from '../../registry/registry.types.js';
import { mapBounded } from '../../registry/request-limits.js';
import type { JobConfiguration } from '../config/job-configuration.js';
import type { LeaderService } from '../election/leader.service.js';
import type { InstanceService } from '../instance/instance.service.js';
import type { JobContext } from '../context/job-context.js';
import { everyItem } from '../paths.js';
import type { ServerService } from '../server/server.service.js';
import type { ExecutionService } from '../execution/execution.service.js';
import { AVG_ALLOCATION } from '../plugins/sharding-strategies.js';

/** Checks a strategy's answer: every item in [0, total) exactly once, only to given instances. */
export function validateShardingResult(
  result: Map<string, number[]>,
  instances: readonly JobInstance[],
  total: number,
): string | undefined {
  const ids = new Set(instances.map((i) => i.jobInstanceId));
  const seen = new Set<number>();
  for (const [id, items] of result) {
    if (!ids.has(id)) return `assigned items to unknown instance '${id}'`;
    for (const item of items) {
      if (!Number.isInteger(item) || item < 0 || item >= total) return `assigned item ${item}, outside 0..${total - 1}`;
      if (seen.has(item)) return `assigned item ${item} twice`;
      seen.add(item);
    }
  }
  return seen.size === total ? undefined : `left ${total - seen.size} item(s) unassigned`;
}

/**
 * Sharding (ElasticJob's ShardingService): only the leader shards, lazily at the next firing after the
 * `leader/sharding/necessary` flag is set, and writes the result in one transaction. Followers wait for it,
 * event-driven and bounded (ElasticJob polls every 100 ms without bound, docs/reference/elasticjob.md §8 #2395).
 */
export class ShardingService {
  /** The sharding (or the wait for the leader's) running now, if any. */
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly ctx: JobContext,
    private readonly leader: LeaderService,
    private readonly servers: ServerService,
    private readonly instances: InstanceService,
    private readonly execution: ExecutionService,
  ) {}

  /** Leader only: mark that the next firing must reshard. Waits (bounded) for a leader to exist first. */
  async setReshardingFlag(): Promise<void> {
    if (!(await this.leader.isLeaderUntilBlock())) return;
    // Set already: the resharding it asks for takes this change too (8 peers joining sent 7 creates a job that
    // failed). A join that lands while we shard is flagged again after it (flagMembershipChangedWhileSharding).
    if (this.isNeedSharding()) return;
    await this.ctx.storage.createOrKeep(this.ctx.paths.shardingNecessary);
  }

  isNeedSharding(): boolean {
    return this.ctx.storage.cached.has(this.ctx.paths.shardingNecessary);
  }

  /** Items assigned to `instanceId` by the last sharding. */
  getShardingItems(instanceId: string, total: number): number[] {
    const items: number[] = [];
    for (let item = 0; item < total; item++) {
      if (this.ctx.storage.cached.get(this.ctx.paths.shardingInstance(item)) === instanceId) items.push(item);
    }
    return items;
  }

  /** My items; none when my server is not available or my instance is not online. */
  getLocalShardingItems(total: number): number[] {
    if (!this.servers.isAvailableServer(this.ctx.ip) || !this.instances.isLocalInstanceOnline()) return [];
    return this.getShardingItems(this.ctx.instanceId, total);
  }

  /** staticSharding: once items are assigned, membership changes do not move them (ElasticJob's rule). */
  isStaticallySharded(config: JobConfiguration): boolean {
    return config.staticSharding && this.ctx.storage.cached.childCount(this.ctx.paths.sharding) > 0;
  }

  /** Items whose `sharding/{i}/instance` names no live instance: missing, garbage, or an instance that is gone. */
  itemsWithoutLiveOwner(total: number): number[] {
    const stray: number[] = [];
    for (let item = 0; item < total; item++) {
      const owner = this.ctx.storage.cached.get(this.ctx.paths.shardingInstance(item));
      if (owner === undefined || !this.instances.isInstanceOnline(owner)) stray.push(item);
    }
    return stray;
  }

  /**
   * The leader shards now if the flag is set, rather than at the next firing: started with the job, the first
   * firing then finds its items assigned and starts them on its instant instead of sharding while they wait (a
   * thousand jobs' sharding at one instant, issue 43). ElasticJob shards lazily at the firing, but nothing in its
   * protocol ties the sharding to one (ShardingService.shardingIfNecessary reads only the flag and the instances),
   * and a Java follower reads the same nodes. A firing meanwhile waits for this sharding (shardingIfNecessary).
   */
  async shardEarly(config: JobConfiguration): Promise<void> {
    if (!this.leader.isLeader() || !this.isNeedSharding()) return;
    await this.shardingIfNecessary(config);
  }

  /**
   * Whether shardingIfNecessary may have anything to do, from the cache: a sharding under way here, the flag set, or
   * (the leader) items assigned to no live instance. False: it would return at once.
   */
  mayNeedSharding(config: JobConfiguration): boolean {
    return (
      this.inFlight !== undefined ||
      this.isNeedSharding() ||
      (this.leader.isLeader() &&
        !this.isStaticallySharded(config) &&
        this.itemsWithoutLiveOwner(config.shardingTotalCount).length > 0)
    );
  }

  /**
   * ElasticJob's shardingIfNecessary, one at a time per job: an early sharding (shardEarly) and a firing's, or two
   * firings', never shard together; the later one runs once the earlier is done (and finds the flag gone).
   */
  async shardingIfNecessary(config: JobConfiguration): Promise<void> {
    while (this.inFlight) await this.inFlight.catch(() => undefined);
    const run = this.shardIfNecessary(config).finally(() => {
      if (this.inFlight === run) this.inFlight = undefined;
    });
    this.inFlight = run;
    return run;
  }

  private async shardIfNecessary(config: JobConfiguration): Promise<void> {
    const { storage, paths, logger, waitTimeoutMs } = this.ctx;
    if (!this.isNeedSharding() && !(await this.flagItemsWithoutLiveOwner(config))) return;
    if (!this.instances.hasAvailableJobInstances()) return;
    const deadline = Date.now() + waitTimeoutMs;
    const shardingDone = (): boolean =>
      !storage.cached.has(paths.shardingNecessary) && !storage.cached.has(paths.shardingProcessing);
    // Followers wait for the leader, event-driven; if the leader goes away meanwhile (it crashed or was cut off),
    // they stop waiting for it and elect a new one, which shards.
    while (!(await this.leader.isLeaderUntilBlock(Math.max(0, deadline - Date.now())))) {
      await storage.cached.waitFor(
        () => shardingDone() || !this.leader.hasLeader(),
        Math.max(0, deadline - Date.now()),
      );
      if (shardingDone()) {
        await storage.cached.settled();
        return;
      }
      if (Date.now() >= deadline) {
        logger.warn(
          `the leader has not finished sharding within ${waitTimeoutMs} ms; firing with the current assignment`,
        );
        return;
      }
    }
    if (!this.isNeedSharding()) return; // a previous leader finished it while we were being elected
    const total = config.shardingTotalCount;
    if (config.monitorExecution) await this.execution.readMarkerOwners(everyItem(total));
    if (config.monitorExecution && this.execution.hasLiveRunningItems(total)) {
      logger.log('waiting for running items to finish before resharding');
      if (!(await storage.cached.waitFor(() => !this.execution.hasLiveRunningItems(total), waitTimeoutMs))) {
        logger.warn(`items still running after ${waitTimeoutMs} ms; resharding is postponed to the next firing`);
        return;
      }
    }
    // What the instances say is read now (their nodes are lazy); one left unread (a read lost with the connection,
    // a re-sync meanwhile) would be left out of the sharding: the flag stays, and the next firing tries again.
    await this.instances.readInstances();
    const instances = this.instances.getAvailableJobInstances();
    if (this.instances.hasUnreadInstances()) {
      logger.warn('could not read every live instance; resharding is postponed to the next firing');
      return;
    }
    if (instances.length === 0) return;
    const strategy = this.ctx.plugins.strategy(config.jobShardingStrategyType) ?? AVG_ALLOCATION;
    let result = strategy.sharding(instances, this.ctx.jobName, total);
    const problem = validateShardingResult(result, instances, total);
    if (problem) {
      logger.error(`sharding strategy '${strategy.type}' ${problem}; using AVG_ALLOCATION this time`);
      result = AVG_ALLOCATION.sharding(instances, this.ctx.jobName, total);
    }
    const assign: TransactionOp[] = [];
    for (const [instanceId, items] of result) {
      for (const item of items) assign.push(storage.createOp(paths.shardingInstance(item), instanceId));
    }
    if (!(await this.writeAtomically(result, total))) await this.writeWithProcessingNode(assign, total);
    logger.log(
      `sharded ${total} item(s) over ${instances.length} instance(s): ` +
        `${[...result].map(([id, items]) => `${id}=[${items.join(',')}]`).join(' ')}`,
    );
    await storage.cached.settled();
    await this.flagMembershipChangedWhileSharding(instances, config);
  }

  /**
   * The whole sharding in one request, sent with the other jobs' writes of this tick: the owners that move
   * rewritten (ownerOpsFromCache) and the flag removed at once. ElasticJob's `leader/sharding/processing` node marks a sharding
   * written in several requests (ShardingService.shardingIfNecessary creates it, and removes it in the transaction
   * that writes the owners); created and removed in one atomic request, nobody could ever see it, so it is left
   * out: a request and two watch events fewer a job. False, with nothing written, when the cache shows a processing
   * node (a leader gone mid-sharding), when it takes more than one request, or when ZooKeeper refuses it (the cache
   * was behind): ElasticJob's way then.
   */
  private async writeAtomically(result: ReadonlyMap<string, readonly number[]>, total: number): Promise<boolean> {
    const { storage, paths } = this.ctx;
    if (storage.cached.has(paths.shardingProcessing)) return false;
    const ops = [...this.ownerOpsFromCache(result, total), { op: 'remove', path: paths.shardingNecessary } as const];
    if (storage.multiBatches(ops).length !== 1) return false;
    try {
      await storage.transaction(ops, { coalesce: true });
      return true;
    } catch (error) {
      // Refused as a whole (the cache was behind): step by step. Anything else (a connection lost, maybe after the
      // request was applied) is thrown: redone step by step on a tree half as planned, it would clear the owners.
      const code = registryErrorCode(error);
      if (code !== 'NODE_EXISTS' && code !== 'NO_NODE' && code !== 'BAD_VERSION' && code !== 'NOT_EMPTY') throw error;
      // A combined request lost with the connection is sent again alone (TransactionCoalescer): refused then, it may
      // have been applied the first time. Only a sharding removes the flag: gone, this round is written.
      await storage.cached.settled();
      if (!storage.cached.has(paths.shardingNecessary)) return true;
      this.ctx.logger.debug(`sharding in one request refused (${code}): sharding step by step`);
      return false;
    }
  }

  /** ElasticJob's way: `processing` first, then the owners (in as many requests as needed), the flags last. */
  private async writeWithProcessingNode(assign: readonly TransactionOp[], total: number): Promise<void> {
    const { storage, paths } = this.ctx;
    await storage.createEphemeral(paths.shardingProcessing, '', { replaceOthers: true });
    const owners = [
      ...assign,
      { op: 'remove', path: paths.shardingNecessary } as const,
      { op: 'remove', path: paths.shardingProcessing } as const,
    ];
    try {
      try {
        // One transaction, planned from the cache: clear the old owners, make missing item nodes, assign. Beyond
        // what one request may carry, several in order: the flags go in the last, so followers wait for all.
        await storage.transaction([...this.resetOpsFromCache(total), ...owners], { batches: true });
      } catch {
        // The cache was behind (or a request failed half-way): ElasticJob's way, step by step, then the assignment.
        await this.resetShardingInfo(total);
        await storage.transaction(owners, { batches: true });
      }
    } catch (error) {
      await storage.remove(paths.shardingProcessing).catch(() => undefined);
      throw error;
    }
  }

  /**
   * A peer that joined (or left, or whose server changed) while we sharded, after the instances were taken and before
   * our transaction removed the flag, flagged nothing: the flag was still there, and went with our transaction
   * (ElasticJob has the same gap). Our cache, settled after the transaction, shows every such change made before it:
   * the available instances differing from those sharded over are flagged again, for the next firing.
   */
  private async flagMembershipChangedWhileSharding(
    sharded: readonly JobInstance[],
    config: JobConfiguration,
  ): Promise<void> {
    if (config.staticSharding || !this.leader.isLeader()) return;
    const shardedIds = new Set(sharded.map((instance) => instance.jobInstanceId));
    const available = new Set(this.instances.availableInstanceIds());
    // Both ways: joined (or enabled) meanwhile, and left (or disabled) meanwhile.
    const changed = [
      ...[...available].filter((id) => !shardedIds.has(id)),
      ...[...shardedIds].filter((id) => !available.has(id)),
    ];
    if (changed.length === 0) return;
    this.ctx.logger.log(`instance(s) ${changed.join(', ')} came or went while sharding: resharding at the next firing`);
    await this.ctx.storage.createOrKeep(this.ctx.paths.shardingNecessary);
  }

  /**
   * The leader, at a firing: items assigned to no live instance (an owner gone without anyone flagging it, a value
   * another tool wrote) are resharded now rather than at the next reconcile. Cache reads only: free when all is well.
   */
  private async flagItemsWithoutLiveOwner(config: JobConfiguration): Promise<boolean> {
    if (!this.leader.isLeader() || this.isStaticallySharded(config)) return false;
    const stray = this.itemsWithoutLiveOwner(config.shardingTotalCount);
    if (stray.length === 0) return false;
    const { storage, paths } = this.ctx;
    const shown = stray
      .slice(0, 5)
      .map(
        (item) =>
          `${storage.fullPath(paths.shardingInstance(item))} = ` +
          `'${(storage.cached.get(paths.shardingInstance(item)) ?? '(none)').slice(0, 40)}'`,
      );
    this.ctx.logger.warn(
      `items [${stray.join(',')}] are assigned to no live instance ` +
        `(${shown.join(', ')}${stray.length > 5 ? ', ...' : ''}): resharding now`,
    );
    await storage.createOrKeep(paths.shardingNecessary);
    return true;
  }

  /**
   * The owners' writes of a sharding in one request, planned from the cache: an item whose owner stays is not
   * rewritten (only checked at the version cached, so a cache behind fails the request), so a resharding as a peer
   * joins costs every instance an event and a read only for the items that moved. An owner that changes is removed
   * and created again, as ElasticJob's resetShardingInfo and its transaction do; items beyond the total go.
   */
  private ownerOpsFromCache(result: ReadonlyMap<string, readonly number[]>, total: number): TransactionOp[] {
    const { storage, paths } = this.ctx;
    const ops: TransactionOp[] = [];
    for (const [instanceId, items] of result) {
      for (const item of items) {
        const owner = paths.shardingInstance(item);
        const version = storage.cached.version(owner);
        if (!storage.cached.has(paths.shardingItem(item))) ops.push(storage.createOp(paths.shardingItem(item), ''));
        else if (version !== undefined && storage.cached.get(owner) === instanceId) {
          ops.push({ op: 'check', path: owner, version });
          continue;
        } else if (storage.cached.has(owner)) ops.push({ op: 'remove', path: owner });
        ops.push(storage.createOp(owner, instanceId));
      }
    }
    return [...ops, ...this.beyondTotalOps(total)];
  }

  private resetOpsFromCache(total: number): TransactionOp[] {
    const { storage, paths } = this.ctx;
    const ops: TransactionOp[] = [];
    for (let item = 0; item < total; item++) {
      if (!storage.cached.has(paths.shardingItem(item))) ops.push(storage.createOp(paths.shardingItem(item), ''));
      else if (storage.cached.has(paths.shardingInstance(item)))
        ops.push({ op: 'remove', path: paths.shardingInstance(item) });
    }
    return [...ops, ...this.beyondTotalOps(total)];
  }

  /** Items beyond the new total: their children first, then the item node. */
  private beyondTotalOps(total: number): TransactionOp[] {
    const { storage, paths } = this.ctx;
    const ops: TransactionOp[] = [];
    for (const name of storage.cached.children(paths.sharding).filter((n) => /^\d+$/.test(n) && Number(n) >= total)) {
      for (const child of storage.cached.children(`${paths.sharding}/${name}`))
        ops.push({ op: 'remove', path: `${paths.sharding}/${name}/${child}` });
      ops.push({ op: 'remove', path: `${paths.sharding}/${name}` });
    }
    return ops;
  }

  private async resetShardingInfo(total: number): Promise<void> {
    const { storage, paths } = this.ctx;
    await mapBounded(everyItem(total), async (item) => {
      await storage.remove(paths.shardingInstance(item));
      await storage.createOrKeep(paths.shardingItem(item));
    });
    const extra = storage.cached.children(paths.sharding).filter((name) => /^\d+$/.test(name) && Number(name) >= total);
    await mapBounded(extra, (name) => storage.removeTree(`${paths.sharding}/${name}`));
  }
}
