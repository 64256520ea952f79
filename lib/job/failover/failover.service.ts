import { registryErrorCode } from '../../errors/elastic-job.errors.js';
import type { JobConfiguration } from '../config/job-configuration.js';
import type { InstanceService } from '../instance/instance.service.js';
import type { JobContext } from '../context/job-context.js';
import type { ServerService } from '../server/server.service.js';
import { everyItem, serverIpOfInstance } from '../paths.js';

/**
 * Failover (ElasticJob's FailoverService, docs/reference/elasticjob.md §5.6): when an instance dies while running
 * items, every peer flags
 * exactly those items under `leader/failover/items`; an idle peer claims one item at a time under the latch
 * `leader/failover/latch` (writing `sharding/{i}/failover`, ephemeral, and `sharding/{i}/failovering`,
 * persistent, both with its id) and runs it at once. The owner's later firings skip items taken over; completion
 * removes both nodes; a taker that dies has its `failovering` items flagged again.
 */
export class FailoverService {
  constructor(
    private readonly ctx: JobContext,
    private readonly servers: ServerService,
    private readonly instances: InstanceService,
  ) {}

  /**
   * Flag an item a crashed instance was running, unless someone already took it over. One write, resting on the
   * crashed instance's `running` marker: the first peer to flag removes it, so a peer that flags late (its cache
   * behind: the item taken over already, or run to its end) writes nothing. The `failover` node made and removed in
   * the same write fails it while a taker holds the item (whose own marker is there again then). ElasticJob checks,
   * then writes (FailoverService.setCrashedFailoverFlag): a late peer flagged an item run already, and a second taker
   * ran it again (workflow-faults.spec, in a full run).
   */
  async setCrashedFailoverFlag(item: number): Promise<void> {
    const { storage, paths, instanceId } = this.ctx;
    if (storage.cached.has(paths.failover(item))) return;
    await storage.createOrKeep(paths.failoverItems);
    try {
      await storage.transaction([
        { op: 'check', path: paths.running(item) },
        storage.createOp(paths.failover(item), instanceId, 'EPHEMERAL'),
        { op: 'remove', path: paths.failover(item) },
        storage.createOp(paths.failoverItem(item), ''),
        { op: 'remove', path: paths.running(item) },
      ]);
    } catch (error) {
      // NO_NODE: flagged by another peer, or run to its end; NODE_EXISTS: taken over, or flagged already.
      const code = registryErrorCode(error);
      if (code !== 'NO_NODE' && code !== 'NODE_EXISTS') throw error;
    }
  }

  /** Flag an item whose taker died (its `failovering` node names a dead instance). */
  async setCrashedFailoverFlagDirectly(item: number): Promise<void> {
    const { storage, paths } = this.ctx;
    await storage.createOrKeep(paths.failoverItem(item));
    await storage.remove(paths.running(item));
    await storage.remove(paths.failovering(item));
  }

  needFailover(): boolean {
    return this.ctx.storage.cached.children(this.ctx.paths.failoverItems).length > 0;
  }

  /** Items a crashed instance was running: assigned to it, with a `running` marker it wrote. */
  getCrashedShardingItems(instanceId: string, total: number): number[] {
    const { storage, paths } = this.ctx;
    if (!this.servers.isEnableServer(serverIpOfInstance(instanceId))) return [];
    const items: number[] = [];
    for (let item = 0; item < total; item++) {
      if (storage.cached.get(paths.shardingInstance(item)) === instanceId && storage.cached.has(paths.running(item)))
        items.push(item);
    }
    return items;
  }

  /** Items a (crashed) taker had claimed. */
  getFailoveringItems(instanceId: string, total: number): number[] {
    const items: number[] = [];
    for (let item = 0; item < total; item++) {
      if (this.ctx.storage.cached.get(this.ctx.paths.failovering(item)) === instanceId) items.push(item);
    }
    return items;
  }

  /** Items I have claimed and must run now. */
  getLocalFailoverItems(total: number): number[] {
    const items: number[] = [];
    for (let item = 0; item < total; item++) {
      if (this.ctx.storage.cached.get(this.ctx.paths.failover(item)) === this.ctx.instanceId) items.push(item);
    }
    return items;
  }

  /** My items that someone else has taken over: my firings skip them. */
  getLocalTakeOffItems(items: readonly number[]): number[] {
    return items.filter((item) => {
      const taker = this.ctx.storage.cached.get(this.ctx.paths.failover(item));
      return taker !== undefined && taker !== this.ctx.instanceId;
    });
  }

  /**
   * If crashed items wait and this instance is idle: claim the first one (descending string order, as ElasticJob)
   * under the failover latch. Returns the claimed item, or undefined.
   */
  async claim(isIdle: () => boolean): Promise<number | undefined> {
    const { storage, paths, instanceId, waitTimeoutMs } = this.ctx;
    if (!this.needFailover() || !isIdle() || !this.instances.isLocalInstanceOnline()) return undefined;
    let claimed: number | undefined;
    await storage.executeInLeader(paths.failoverLatch, waitTimeoutMs, async () => {
      // Re-check with fresh reads: another instance may have claimed while we waited for the latch.
      const waiting = ((await storage.direct.children(paths.failoverItems)) ?? []).filter((n) => /^\d+$/.test(n));
      if (waiting.length === 0 || !isIdle()) return;
      const name = waiting.sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))[0]!;
      const item = Number(name);
      await storage.transaction([
        storage.createOp(paths.failover(item), instanceId, 'EPHEMERAL'),
        ...(storage.cached.has(paths.failovering(item))
          ? [{ op: 'remove' as const, path: paths.failovering(item) }]
          : []),
        storage.createOp(paths.failovering(item), instanceId, 'PERSISTENT'),
        { op: 'remove', path: paths.failoverItem(item) },
      ]);
      claimed = item;
      this.ctx.logger.log(`took over item ${item} of a crashed instance`);
      this.ctx.events.publish('failover.claimed', { shardingItem: item });
    });
    await storage.cached.settled();
    return claimed;
  }

  /** After running failover items: remove their `failover` and `failovering` nodes. */
  async updateFailoverComplete(items: readonly number[]): Promise<void> {
    const { storage, paths } = this.ctx;
    await Promise.all(
      items.flatMap((item) => [storage.remove(paths.failover(item)), storage.remove(paths.failovering(item))]),
    );
  }

  /** `failover` switched off in the config: remove every `sharding/{i}/failover` (not `failovering`), as ElasticJob. */
  async removeFailoverInfo(total: number): Promise<void> {
    await this.ctx.storage.remove(
      everyItem(total).map((item) => this.ctx.paths.failover(item)),
      { onlyCached: true },
    );
  }

  /**
   * ElasticJob's LegacyCrashedRunningItemListener: when this instance comes up as the only available one (the
   * whole cluster restarted), items left `running` or `failovering` by instances that are gone are flagged.
   */
  async recoverLegacyCrashedItems(config: JobConfiguration): Promise<void> {
    const { storage, paths } = this.ctx;
    // Alone among the live instances (peers' nodes unread: their servers as their ids name them).
    const available = this.instances.availableInstanceIds();
    if (available.length !== 1 || available[0] !== this.ctx.instanceId) return;
    await storage.cached.readUnread(
      Array.from({ length: config.shardingTotalCount }, (_, item) => paths.running(item)),
    );
    const gone = (owner: string | undefined): boolean => owner !== undefined && !this.instances.isInstanceOnline(owner);
    for (let item = 0; item < config.shardingTotalCount; item++) {
      if (gone(storage.cached.get(paths.failovering(item))) || gone(storage.cached.get(paths.running(item)))) {
        await this.setCrashedFailoverFlagDirectly(item);
      }
    }
  }

  /** Peers of a crashed instance: flag what it was running (or had claimed). */
  async onInstanceCrashed(crashedId: string, config: JobConfiguration): Promise<boolean> {
    const failovering = this.getFailoveringItems(crashedId, config.shardingTotalCount);
    if (failovering.length > 0) {
      for (const item of failovering) await this.setCrashedFailoverFlagDirectly(item);
      this.ctx.logger.log(
        `instance ${crashedId} died while running taken-over items [${failovering.join(',')}]: flagged for failover`,
      );
      return true;
    }
    const crashed = this.getCrashedShardingItems(crashedId, config.shardingTotalCount);
    for (const item of crashed) await this.setCrashedFailoverFlag(item);
    if (crashed.length > 0)
      this.ctx.logger.log(
        `instance ${crashedId} died while running items [${crashed.join(',')}]: flagged for failover`,
      );
    return crashed.length > 0;
  }
}
