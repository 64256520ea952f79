import { Logger } from '@nestjs/common';
import type { JobContext } from '../context/job-context.js';
import { describeItems } from '../../util/item-list.js';
import type { ExecutionEventMap, ExecutionEvents } from '../events/execution-events.js';
import type { FiringSource } from '../events/firing-state.js';

type SkipReason = ExecutionEventMap['firing-skipped']['reason'];
export type FiringStarted = ExecutionEventMap['firing-started'];
export type ItemStarted = ExecutionEventMap['item-started'];

/**
 * How a job's firings are told (the execution events, never awaited, and their log lines): a firing skipped and
 * why, started and completed; an item started and completed; and the overlaps of a job slower than its cron, said
 * at most once a minute.
 */
export class FiringReport {
  /** When the overlap line was last logged at log level, and how many since went to debug. */
  private overlapLog = { at: -Infinity, suppressed: 0 };

  constructor(
    private readonly ctx: JobContext,
    readonly events: ExecutionEvents,
    /** Told at once (not after the instant, as the events are) which items a firing is starting. */
    private readonly onItemsStarting?: (items: readonly number[]) => void,
  ) {}

  base(source: FiringSource): { jobName: string; instanceId: string; source: FiringSource } {
    return { jobName: this.ctx.jobName, instanceId: this.ctx.instanceId, source };
  }

  skipped(source: FiringSource, reason: SkipReason, items: number[]): void {
    this.events.emit('firing-skipped', { ...this.base(source), reason, items });
  }

  /** The firing's start, made when its items are known (told by firingStarted, once they start). */
  starting(source: FiringSource, taskId: string, items: number[]): FiringStarted {
    // base()'s fields, then the firing's: built whole, not spread (a thousand firings at one instant).
    return {
      jobName: this.ctx.jobName,
      instanceId: this.ctx.instanceId,
      source,
      taskId,
      items,
      startTime: new Date(),
    };
  }

  firingStarted(started: FiringStarted): void {
    // Debug lines are built only when debug is on: a thousand firings at one instant would build them for nobody.
    if (Logger.isLevelEnabled('debug'))
      this.ctx.logger.debug(`${started.source} firing: items [${describeItems(started.items)}] starting`);
    this.onItemsStarting?.(started.items);
    this.events.emit('firing-started', started);
  }

  firingCompleted(started: FiringStarted, success: boolean): void {
    // started's fields in its order, then the end's: built whole, not spread (a spread object was ~900 bytes here).
    const completed: ExecutionEventMap['firing-completed'] = {
      jobName: started.jobName,
      instanceId: started.instanceId,
      source: started.source,
      taskId: started.taskId,
      items: started.items,
      startTime: started.startTime,
      completeTime: new Date(),
      success,
    };
    if (Logger.isLevelEnabled('debug'))
      this.ctx.logger.debug(
        `${started.source} firing: items [${describeItems(started.items)}] finished in ` +
          `${completed.completeTime.getTime() - started.startTime.getTime()} ms${success ? '' : ', some failed'}`,
      );
    this.events.emit('firing-completed', completed);
  }

  itemStarted(
    source: FiringSource,
    taskId: string,
    item: number,
    scheduledAt: number | undefined,
    executionId?: string,
    attempt?: number,
  ): ItemStarted {
    // Built without spreads: a thousand jobs' items start at one instant, each paying for this before the next.
    const started: ItemStarted = {
      jobName: this.ctx.jobName,
      instanceId: this.ctx.instanceId,
      source,
      taskId,
      shardingItem: item,
      startTime: new Date(),
    };
    if (scheduledAt !== undefined) started.scheduledTime = new Date(scheduledAt);
    if (executionId !== undefined) started.executionId = executionId;
    if (attempt !== undefined) started.attempt = attempt;
    this.events.emit('item-started', started);
    return started;
  }

  /** The item's end: a success, or its failure with the cause. */
  itemCompleted(started: ItemStarted, failure?: { cause: unknown }): void {
    // Without spreads, as itemStarted: the start's fields, in its order, then the end's.
    const completed: ExecutionEventMap['item-completed'] = {
      jobName: started.jobName,
      instanceId: started.instanceId,
      source: started.source,
      taskId: started.taskId,
      shardingItem: started.shardingItem,
      startTime: started.startTime,
    } as ExecutionEventMap['item-completed'];
    if (started.scheduledTime !== undefined) completed.scheduledTime = started.scheduledTime;
    if (started.executionId !== undefined) completed.executionId = started.executionId;
    if (started.attempt !== undefined) completed.attempt = started.attempt;
    completed.completeTime = new Date();
    completed.success = failure === undefined;
    if (failure !== undefined) completed.failureCause = failure.cause;
    this.events.emit('item-completed', completed);
  }

  /**
   * A job slower than its cron overlaps at every instant: said at most once a minute (with how many since), the
   * rest at debug level.
   */
  overlap(): void {
    const now = Date.now();
    if (now - this.overlapLog.at >= 60_000) {
      const since = this.overlapLog.suppressed > 0 ? ` (${this.overlapLog.suppressed} more in the last minute)` : '';
      this.ctx.logger.log(`the previous firing is still running: this one is a misfire${since}`);
      this.overlapLog = { at: now, suppressed: 0 };
    } else {
      this.overlapLog.suppressed++;
      this.ctx.logger.debug('the previous firing is still running: this one is a misfire');
    }
  }
}
