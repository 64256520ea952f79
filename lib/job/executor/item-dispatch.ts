import type { ItemInterceptor } from '../../interfaces/item-interceptor.interface.js';
import type { JobErrorHandler } from '../../interfaces/sharded-job-options.interface.js';
import type { ShardingContext } from '../../interfaces/sharding-context.interface.js';
import { mapBounded } from '../../registry/request-limits.js';
import type { JobConfiguration } from '../config/job-configuration.js';
import type { JobContext } from '../context/job-context.js';
import { parseShardingItemParameters } from '../config/sharding-item-parameters.js';
import type { FiringReport } from './firing-report.js';
import type { FiringSource } from '../events/firing-state.js';
import type { JobItemExecutor } from '../plugins/item-executor.js';
import { ItemCoveredError } from '../../errors/elastic-job.errors.js';
import type { ItemProgress } from '../../interfaces/sharding-context.interface.js';
import { itemPolicies } from '../policies/item-policies.js';
import type { ItemLineBook } from '../policies/item-lines.js';
import { type ItemFailure, RunningItem, runAttempts } from './item-attempts.js';

/** What a run of items came to: whether every item succeeded, and what error handlers threw (THROW). */
export interface DispatchOutcome {
  success: boolean;
  handlerFailures: unknown[];
}

/**
 * The items of a firing on this instance: each through the app's item interceptors and the job type's item executor,
 * at most `maxConcurrentItems` at once, with a signal of its own (aborted on session loss, shutdown timeout or an
 * operator's stop); a failure goes to the job's error handler. Every item is told started and completed.
 */
export class ItemDispatch {
  /** The items running now; made for a run of items, dropped once none runs (~180 bytes a job). */
  private running: Map<number, RunningItem> | undefined;
  /** The current run of items was covered by the next firing: none of it starts any more. */
  private covered = false;

  constructor(
    private readonly ctx: JobContext,
    private readonly itemExecutor: JobItemExecutor,
    private readonly report: FiringReport,
    /** The app's item interceptors, outermost first (shared, read at each item). */
    private readonly interceptors: readonly ItemInterceptor[] = [],
    /** At most this many items at once; undefined: all of a firing at once. */
    private readonly maxConcurrentItems?: number,
    /** Where the items' kept log lines go (the in-memory execution log), if anywhere. */
    private readonly lineBook?: ItemLineBook,
  ) {}

  runningItems(): number[] {
    return this.running ? [...this.running.keys()] : [];
  }

  get anyRunning(): boolean {
    return this.running !== undefined && this.running.size > 0;
  }

  abortAll(reason: string): void {
    for (const running of this.running?.values() ?? []) running.abort(new Error(reason));
  }

  /**
   * XXL-JOB's COVER_EARLY: every running item's signal aborts with an ItemCoveredError and its attempt is given up at
   * once (its code left to settle on its own), so that the firing ends and the covering one starts.
   */
  cover(): number[] {
    const items = this.runningItems();
    // Items of the covered firing still waiting their turn (maxConcurrentItems) do not start either.
    if (items.length > 0) this.covered = true;
    for (const [item, running] of this.running ?? []) running.abort(new ItemCoveredError(this.ctx.jobName, item), true);
    return items;
  }

  /** Wakes the items waiting out a backoff, so that they see why they may not retry (a shutdown). */
  wakeRetries(): void {
    for (const running of this.running?.values() ?? []) running.wake?.();
  }

  /** The latest progress of the running items that reported one. */
  progress(): Map<number, { value: ItemProgress; at: number }> {
    const found = new Map<number, { value: ItemProgress; at: number }>();
    for (const [item, running] of this.running ?? []) if (running.progress) found.set(item, running.progress);
    return found;
  }

  /**
   * Runs the items. One waiting its turn does not start when `refusal()` says why not (an operator halted the job
   * here, the session was lost meanwhile: a peer may own it by now); a retry does not start when `retryRefusal()` says
   * why not (the same, a shutdown, the item disabled).
   */
  async run(
    items: number[],
    config: JobConfiguration,
    firing: { source: FiringSource; taskId: string; scheduledAt: number | undefined },
    handler: JobErrorHandler,
    refusal: () => string | undefined,
    retryRefusal: (item: number) => string | undefined = refusal,
  ): Promise<DispatchOutcome> {
    // Most jobs have no item parameters: no Map parsed for them at each firing.
    const parameters =
      config.shardingItemParameters === undefined
        ? undefined
        : parseShardingItemParameters(config.shardingItemParameters);
    const parameterOf = (item: number): string | undefined =>
      parameters === undefined || typeof parameters === 'string' ? undefined : parameters.get(item);
    const policies = itemPolicies(this.ctx.jobName, config.props);
    const outcome: DispatchOutcome = { success: true, handlerFailures: [] };
    this.covered = false;
    const attempt = (context: ShardingContext) => this.runItem(context);
    // Not an async function per item: runAttempts' promise and one then() (an async frame and its await were ~500
    // bytes of each item start in a burst, issue 43).
    const startItem = (item: number): Promise<void> => {
      const refusedNow = this.covered ? 'the next firing covered this one (cover-early)' : refusal();
      if (refusedNow !== undefined) {
        this.ctx.logger.warn(`item ${item} not started: ${refusedNow}`);
        return Promise.resolve();
      }
      const runningItem = new RunningItem();
      const running = (this.running ??= new Map());
      running.set(item, runningItem);
      const base = {
        jobName: this.ctx.jobName,
        taskId: firing.taskId,
        shardingTotalCount: config.shardingTotalCount,
        jobParameter: config.jobParameter,
        shardingItem: item,
        shardingParameter: parameterOf(item),
      };
      let attempts: Promise<ItemFailure | undefined>;
      try {
        attempts = runAttempts(
          this.ctx,
          this.report,
          policies,
          this.lineBook,
          base,
          runningItem,
          firing,
          attempt,
          retryRefusal,
        );
      } catch (error) {
        this.itemOver(running, item);
        return Promise.reject(error as Error);
      }
      return attempts.then(
        (failed) =>
          failed === undefined
            ? this.itemOver(running, item)
            : this.itemFailed(failed, handler, outcome, running, item),
        (error: unknown) => {
          this.itemOver(running, item);
          throw error;
        },
      );
    };
    await mapBounded(items, startItem, this.maxConcurrentItems ?? items.length);
    return outcome;
  }

  /** A failed item's error handler (its failure kept for THROW), then the item is over. */
  private async itemFailed(
    failed: ItemFailure,
    handler: JobErrorHandler,
    outcome: DispatchOutcome,
    running: Map<number, RunningItem>,
    item: number,
  ): Promise<void> {
    try {
      outcome.success = false;
      try {
        await handler.handleException(this.ctx.jobName, failed.failure, failed.context);
      } catch (handlerError) {
        outcome.handlerFailures.push(handlerError);
      }
    } finally {
      this.itemOver(running, item);
    }
  }

  /** The item no longer runs here; the map goes with the run's last item. */
  private itemOver(running: Map<number, RunningItem>, item: number): void {
    running.delete(item);
    if (running.size === 0 && this.running === running) this.running = undefined;
  }

  /** The item through the interceptors, outermost first, then the job type's item executor. */
  private runItem(context: ShardingContext): Promise<unknown> {
    // No interceptor (most apps): the executor at once, without the chain's closure.
    if (this.interceptors.length === 0) return this.itemExecutor.execute(context);
    const call = (index: number): Promise<unknown> => {
      const interceptor = this.interceptors[index];
      if (!interceptor) return this.itemExecutor.execute(context);
      return Promise.resolve().then(() => interceptor(context, () => call(index + 1)));
    };
    return call(0);
  }
}
