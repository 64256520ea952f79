import type { TreeEvent } from '../../registry/tree-cache.js';
import type { ConfigService } from '../config/config.service.js';
import type { JobContext } from '../context/job-context.js';
import { runReaction, type ClusterChangeHandler } from '../context/cluster-change-handler.js';
import type { FailoverService } from './failover.service.js';

/**
 * ElasticJob's FailoverListenerManager: flag the items a crashed instance was running and claim them when idle;
 * claim items flagged by others; failover switched off → its markers go.
 */
export class FailoverReactions implements ClusterChangeHandler {
  private enabled: boolean;

  constructor(
    private readonly ctx: JobContext,
    private readonly config: ConfigService,
    private readonly failover: FailoverService,
    /** Items wait to be taken over: claim them when idle (the executor's failoverIfNecessary). */
    private readonly onFailoverWaiting: () => Promise<void>,
  ) {
    this.enabled = config.load().failover;
  }

  start(): void {
    this.enabled = this.config.load().failover;
  }

  onChange(event: TreeEvent): void {
    const { paths } = this.ctx;
    if (event.path === paths.config && event.type !== 'DELETED') {
      const current = this.config.load();
      if (this.enabled && !current.failover) {
        this.ctx.logger.log('failover switched off: removing failover markers');
        runReaction(this.ctx, 'failover marker removal', () =>
          this.failover.removeFailoverInfo(current.shardingTotalCount),
        );
      }
      this.enabled = current.failover;
    }
    const crashed = paths.instanceIdOf(event.path);
    if (
      crashed !== undefined &&
      crashed !== this.ctx.instanceId &&
      event.type === 'DELETED' &&
      this.config.load().failover
    )
      runReaction(this.ctx, 'failover', async () => {
        if (await this.failover.onInstanceCrashed(crashed, this.config.load())) await this.onFailoverWaiting();
      });
    if (event.type === 'ADDED' && event.path.startsWith(`${paths.failoverItems}/`) && this.config.load().failover)
      runReaction(this.ctx, 'failover', () => this.onFailoverWaiting());
  }
}
