import type { ConfigService } from '../config/config.service.js';
import type { LeaderService } from '../election/leader.service.js';
import type { JobContext } from '../context/job-context.js';
import type { ShardingService } from '../sharding/sharding.service.js';
import { describeError } from '../../errors/elastic-job.errors.js';

/**
 * ElasticJob's ReconcileService: every `reconcileIntervalMinutes` the leader checks that every item is assigned
 * to a live instance, and flags resharding when one is not (a missed event, an operator's edit). One timer per
 * job, unref'd; checks read the cache only.
 */
export class ReconcileService {
  private timer: NodeJS.Timeout | undefined;
  private lastCheck = Date.now();

  constructor(
    private readonly ctx: JobContext,
    private readonly config: ConfigService,
    private readonly leader: LeaderService,
    private readonly sharding: ShardingService,
    /** Checks of this instance's own nodes, run on every tick (cache reads unless something is wrong). */
    private readonly checkOwnNodes: () => Promise<void>,
    /** One "minute" (shortened only by tests of this service). */
    private readonly minuteMs = 60_000,
  ) {}

  start(): void {
    if (this.timer) return;
    this.lastCheck = Date.now();
    this.timer = setInterval(() => {
      const warn = (error: unknown): void => this.ctx.logger.warn(`reconcile failed: ${describeError(error)}`);
      void this.checkOwnNodes().catch(warn);
      void this.check().catch(warn);
    }, this.minuteMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  async check(): Promise<void> {
    const config = this.config.load();
    if (
      config.reconcileIntervalMinutes < 1 ||
      Date.now() - this.lastCheck < config.reconcileIntervalMinutes * this.minuteMs
    )
      return;
    this.lastCheck = Date.now();
    if (!this.ctx.connection.isConnected() || this.sharding.isNeedSharding() || !this.leader.isLeader()) return;
    if (this.sharding.isStaticallySharded(config)) return;
    const stray = this.sharding.itemsWithoutLiveOwner(config.shardingTotalCount);
    if (stray.length === 0) return;
    this.ctx.logger.log(`reconcile: items [${stray.join(',')}] have no live owner; resharding at the next firing`);
    await this.sharding.setReshardingFlag();
  }
}
