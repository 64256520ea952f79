import type { JobContext } from '../context/job-context.js';
import type { LeaderService } from '../election/leader.service.js';
import type { ShardingService } from '../sharding/sharding.service.js';
import type { ConfigService } from '../config/config.service.js';

/**
 * Publishes `leadership.gained` / `leadership.lost` and `sharding.assigned` for this instance, from the job's
 * cache: after each burst of changes has settled, the leader node and (outside a resharding) the items naming this
 * instance are compared with what was last published.
 *
 * A resharding's notifications may reach us in several socket reads, and the cache settles on what it has heard so
 * far: between two reads it shows the owners half old, half new. Every resharding removes `leader/sharding/necessary`
 * in its last request, after the owners (ShardingService: in one request with them when it can, with no `processing`
 * node then): so the items are compared only when the flag is not cached, and at once when its removal is applied,
 * which the cache does after every owner change before it, in ZooKeeper's order.
 */
export class CoordinationEventWatcher {
  private unsubscribe: (() => void) | undefined;
  private leader = false;
  private items: number[] = [];
  private checking = false;

  constructor(
    private readonly ctx: JobContext,
    private readonly config: ConfigService,
    private readonly leaderService: LeaderService,
    private readonly sharding: ShardingService,
  ) {}

  start(): void {
    const { paths } = this.ctx;
    // Only the nodes that can change what is told: not the running markers a firing writes for every item.
    this.unsubscribe ??= this.ctx.storage.cached.listen((event) => {
      // The end of a resharding, whatever comes after it (a newcomer may flag the next one at once).
      if (event.path === paths.shardingNecessary && event.type === 'DELETED') this.compareItems();
      if (
        event.path === paths.leaderElectionInstance ||
        event.path === paths.shardingProcessing ||
        (event.path.startsWith(`${paths.sharding}/`) && event.path.endsWith('/instance'))
      )
        this.scheduleCheck();
    });
    // The items held at start are the baseline, not news (an instance id kept across a restart, pid 1 in a
    // container, finds its old items): only changes after it are told. Leadership taken at registration is news.
    this.items = this.currentItems();
    this.scheduleCheck();
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    if (this.leader) this.ctx.events.publish('leadership.lost', {});
    this.leader = false;
  }

  /** A copy of exactly the items (kept between checks; a filtered array keeps room for more). */
  private currentItems(): number[] {
    return this.sharding.getShardingItems(this.ctx.instanceId, this.config.load().shardingTotalCount).slice();
  }

  private scheduleCheck(): void {
    if (this.checking) return;
    this.checking = true;
    void this.ctx.storage.cached
      .settled()
      .catch(() => undefined)
      .then(() => {
        this.checking = false;
        if (this.unsubscribe) this.check();
      });
  }

  private check(): void {
    const leader = this.leaderService.isLeader();
    if (leader !== this.leader) {
      this.leader = leader;
      this.ctx.events.publish(leader ? 'leadership.gained' : 'leadership.lost', {});
    }
    // Mid-resharding the owners seen may be half old, half new: wait for its end (the removal of the flag, after the
    // new owners; of `processing` too when the leader wrote them in several requests).
    const { storage, paths } = this.ctx;
    if (storage.cached.has(paths.shardingProcessing) || storage.cached.has(paths.shardingNecessary)) return;
    this.compareItems();
  }

  private compareItems(): void {
    const items = this.currentItems();
    if (items.length !== this.items.length || items.some((item, index) => item !== this.items[index])) {
      const previousItems = this.items;
      this.items = items;
      this.ctx.events.publish('sharding.assigned', { items, previousItems });
    }
  }
}
