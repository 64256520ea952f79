import type { TreeEvent } from '../../registry/tree-cache.js';
import { describeNextFirings } from '../../schedule/cron-preview.js';
import type { JobContext } from '../context/job-context.js';
import type { ClusterChangeHandler } from '../context/cluster-change-handler.js';
import type { ConfigService } from './config.service.js';
import type { JobConfiguration } from './job-configuration.js';

/** ElasticJob's RescheduleListenerManager: the cron or time zone changed → the firing loop is rescheduled. */
export class RescheduleReactions implements ClusterChangeHandler {
  private last: { cron: string; timeZone: string | undefined };

  constructor(
    private readonly ctx: JobContext,
    private readonly config: ConfigService,
    private readonly reschedule: (config: JobConfiguration) => void,
  ) {
    this.last = this.schedule();
  }

  start(): void {
    this.last = this.schedule();
  }

  onChange(event: TreeEvent): void {
    if (event.path !== this.ctx.paths.config || event.type === 'DELETED') return;
    const current = this.config.load();
    if (current.cron !== this.last.cron || current.timeZone !== this.last.timeZone) {
      this.ctx.logger.log(
        current.cron === ''
          ? 'cron removed: the job now runs only when triggered'
          : `cron changed to '${current.cron}': rescheduling; next firings ` +
              describeNextFirings(current.cron, current.timeZone),
      );
      this.reschedule(current);
    }
    this.last = this.schedule();
  }

  private schedule(): { cron: string; timeZone: string | undefined } {
    const { cron, timeZone } = this.config.load();
    return { cron, timeZone };
  }
}
