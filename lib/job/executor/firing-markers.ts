import { describeError } from '../../errors/elastic-job.errors.js';
import type { JobConfiguration } from '../config/job-configuration.js';
import type { FailoverService } from '../failover/failover.service.js';
import type { JobContext } from '../context/job-context.js';
import type { ExecutionService } from '../execution/execution.service.js';

/**
 * The running markers of a firing's items (ElasticJob's registerJobBegin and registerJobCompleted,
 * `sharding/{i}/running`), and for a failover run the failover markers of the items it took over.
 */
export class FiringMarkers {
  constructor(
    private readonly ctx: JobContext,
    private readonly execution: ExecutionService,
    private readonly failover: FailoverService,
  ) {}

  /** Marks the items running; resolves with those it could mark (none still running elsewhere). */
  begin(items: number[], config: JobConfiguration): Promise<number[]> {
    return this.execution.registerJobBegin(items, config);
  }

  /**
   * The items are over (or were not started): their markers go; a failure to remove them is logged. Not an async
   * function: a firing's end awaits the removal's own promise (issue 43, docs/benchmarks.md).
   */
  end(items: number[], config: JobConfiguration, failoverRun = false): Promise<unknown> {
    const removed = this.execution
      .registerJobCompleted(items, config)
      .catch((error: unknown) => this.ctx.logger.warn(`could not remove running markers: ${describeError(error)}`));
    if (!failoverRun) return removed;
    return removed.then(() =>
      this.failover
        .updateFailoverComplete(items)
        .catch((error: unknown) => this.ctx.logger.warn(`could not remove failover markers: ${describeError(error)}`)),
    );
  }
}
