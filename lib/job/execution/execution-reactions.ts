import type { TreeEvent } from '../../registry/tree-cache.js';
import type { ConfigService } from '../config/config.service.js';
import type { JobContext } from '../context/job-context.js';
import { runReaction, type ClusterChangeHandler } from '../context/cluster-change-handler.js';
import type { ExecutionService } from './execution.service.js';

/** ElasticJob's MonitorExecutionListenerManager: monitorExecution switched off → every running marker goes. */
export class ExecutionReactions implements ClusterChangeHandler {
  private monitored: boolean;

  constructor(
    private readonly ctx: JobContext,
    private readonly config: ConfigService,
    private readonly execution: ExecutionService,
  ) {
    this.monitored = config.load().monitorExecution;
  }

  start(): void {
    this.monitored = this.config.load().monitorExecution;
  }

  onChange(event: TreeEvent): void {
    if (event.path !== this.ctx.paths.config || event.type === 'DELETED') return;
    const current = this.config.load();
    if (this.monitored && !current.monitorExecution) {
      this.ctx.logger.log('monitorExecution switched off: removing running markers');
      runReaction(this.ctx, 'running marker removal', () =>
        this.execution.removeAllRunningMarkers(current.shardingTotalCount),
      );
    }
    this.monitored = current.monitorExecution;
  }
}
