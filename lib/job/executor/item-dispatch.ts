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

/**
 * An item's abort signal, made when the item first reads it: an AbortController costs tens of microseconds, which a
 * thousand items starting at one instant would pay before the last one starts (most items never read it).
 */
class ItemAbort {
  private controller: AbortController | undefined;
  private reason: Error | undefined;

  get signal(): AbortSignal {
    if (this.controller) return this.controller.signal;
    this.controller = new AbortController();
    if (this.reason) this.controller.abort(this.reason);
    return this.controller.signal;
  }

  abort(reason: Error): void {
    if (this.controller) this.controller.abort(reason);
    else this.reason ??= reason;
  }
}

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
  /** The abort signals of the items running now; made for a run of items, dropped once none runs (~180 bytes a job). */
  private running: Map<number, ItemAbort> | undefined;

  constructor(
    private readonly ctx: JobContext,
    private readonly itemExecutor: JobItemExecutor,
    private readonly report: FiringReport,
    /** The app's item interceptors, outermost first (shared, read at each item). */
    private readonly interceptors: readonly ItemInterceptor[] = [],
    /** At most this many items at once; undefined: all of a firing at once. */
    private readonly maxConcurrentItems?: number,
  ) {}

  runningItems(): number[] {
    return this.running ? [...this.running.keys()] : [];
  }

  get anyRunning(): boolean {
    return this.running !== undefined && this.running.size > 0;
  }

  abortAll(reason: string): void {
    for (const abort of this.running?.values() ?? []) abort.abort(new Error(reason));
  }

  /**
   * Runs the items. One waiting its turn does not start when `refusal()` says why not (an operator halted the job
   * here, the session was lost meanwhile: a peer may own it by now).
   */
  async run(
    items: number[],
    config: JobConfiguration,
    firing: { source: FiringSource; taskId: string; scheduledAt: number | undefined },
    handler: JobErrorHandler,
    refusal: () => string | undefined,
  ): Promise<DispatchOutcome> {
    const parameters = parseShardingItemParameters(config.shardingItemParameters);
    const parameterOf = (item: number): string | undefined =>
      typeof parameters === 'string' ? undefined : parameters.get(item);
    const outcome: DispatchOutcome = { success: true, handlerFailures: [] };
    await mapBounded(
      items,
      async (item) => {
        const refusedNow = refusal();
        if (refusedNow !== undefined) {
          this.ctx.logger.warn(`item ${item} not started: ${refusedNow}`);
          return;
        }
        const abort = new ItemAbort();
        const running = (this.running ??= new Map());
        running.set(item, abort);
        const context: ShardingContext = {
          jobName: this.ctx.jobName,
          taskId: firing.taskId,
          shardingTotalCount: config.shardingTotalCount,
          jobParameter: config.jobParameter,
          shardingItem: item,
          shardingParameter: parameterOf(item),
          get signal() {
            return abort.signal;
          },
        };
        const started = this.report.itemStarted(firing.source, firing.taskId, item, firing.scheduledAt);
        try {
          await this.runItem(context);
          this.report.itemCompleted(started);
        } catch (error) {
          outcome.success = false;
          this.report.itemCompleted(started, { cause: error });
          try {
            await handler.handleException(this.ctx.jobName, error, context);
          } catch (handlerError) {
            outcome.handlerFailures.push(handlerError);
          }
        } finally {
          running.delete(item);
          if (running.size === 0 && this.running === running) this.running = undefined;
        }
      },
      this.maxConcurrentItems ?? items.length,
    );
    return outcome;
  }

  /** The item through the interceptors, outermost first, then the job type's item executor. */
  private runItem(context: ShardingContext): Promise<unknown> {
    const call = (index: number): Promise<unknown> => {
      const interceptor = this.interceptors[index];
      if (!interceptor) return this.itemExecutor.execute(context);
      return Promise.resolve().then(() => interceptor(context, () => call(index + 1)));
    };
    return call(0);
  }
}
