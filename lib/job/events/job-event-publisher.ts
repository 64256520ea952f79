import { flatRandomUUID } from '../../util/uuid.js';
import { hostname } from 'node:os';
import type { ExecutionEventMap, ExecutionEvents, ExecutionObserver } from './execution-events.js';
import { buildTaskId } from '../paths.js';
import { javaItemList } from '../../util/item-list.js';
import type { FiringSource } from './firing-state.js';
import type {
  ElasticJobEvent,
  ElasticJobEventOf,
  ElasticJobEventType,
  ExecutionSource,
  ItemCompletedEvent,
  ItemStartedEvent,
  JobStatusEvent,
  JobStatusState,
} from '../../events/elastic-job-event.types.js';

/** Where a job's events go: the module's ElasticJobEventBus (or nowhere, in the kernel's own tests). */
export interface JobEventSink {
  publish(event: ElasticJobEvent): void;
  /**
   * Whether anybody listens to events of this type; when not, they are not even built (the execution log hears only
   * item events: a firing's four status events, each with a UUID, would be built for nobody).
   */
  observes(type: ElasticJobEventType): boolean;
}

/** The fields a publisher fills in itself. */
type OwnFields = 'type' | 'jobName' | 'instanceId' | 'at';

/** ElasticJob's sources by the executor's (ElasticJob-Lite itself never posts FAILOVER; we say what happened). */
const SOURCES: Record<FiringSource, ExecutionSource> = {
  CRON: 'NORMAL_TRIGGER',
  TRIGGER: 'NORMAL_TRIGGER',
  CATCH_UP: 'MISFIRE',
  FAILOVER: 'FAILOVER',
};

const HOSTNAME = hostname();

export function toExecutionSource(source: FiringSource): ExecutionSource {
  return SOURCES[source];
}

/**
 * The events of one job on this instance, stamped with its name and instance. Coordination services publish
 * through `publish()`; the executor's firing and item events are turned into ElasticJob's execution and status
 * events by `follow()`.
 */
export class JobEventPublisher {
  constructor(
    private readonly sink: JobEventSink | undefined,
    private readonly job: { jobName: string; instanceId: string; ip: string },
  ) {}

  publish<T extends ElasticJobEventType>(type: T, fields: Omit<ElasticJobEventOf<T>, OwnFields>): void {
    if (!this.sink?.observes(type)) return;
    this.sink.publish({
      type,
      jobName: this.job.jobName,
      instanceId: this.job.instanceId,
      at: new Date(),
      ...fields,
    } as ElasticJobEvent);
  }

  /** An event built whole by the caller, who has checked that somebody observes its type. */
  publishBuilt(event: ElasticJobEvent): void {
    this.sink?.publish(event);
  }

  /** Publishes the executor's events as ElasticJob's item (JobExecutionEvent) and status (JobStatusTraceEvent) events. */
  follow(events: ExecutionEvents): () => void {
    return events.observe(new ExecutionEventFollower(this, this.job));
  }

  observes(type: ElasticJobEventType): boolean {
    return this.sink?.observes(type) === true;
  }
}

/**
 * The executor's events of one job as ElasticJob's events: one object with a method per event (closures for each,
 * with their context and unsubscribe calls, were ~2 KB a job).
 *
 * A job runs one firing at a time on an instance, so an item is running at most once here: its number keys the id
 * shared by its start and completion events, and the current firing's failures (for TASK_ERROR). Not the taskId: it
 * lists every item of the firing (tens of kilobytes with thousands of items). Both maps are made when first needed.
 */
class ExecutionEventFollower implements ExecutionObserver {
  private ids: Map<number, string> | undefined;
  private failures: Map<number, string> | undefined;

  constructor(
    private readonly publisher: JobEventPublisher,
    private readonly job: { jobName: string; instanceId: string; ip: string },
  ) {}

  'firing-started'(firing: ExecutionEventMap['firing-started']): void {
    if (!this.publisher.observes('status')) return;
    this.status(firing.taskId, firing.items, 'TASK_STAGING', `Job '${this.job.jobName}' execute begin.`);
    this.status(firing.taskId, firing.items, 'TASK_RUNNING', '');
  }

  'firing-completed'(firing: ExecutionEventMap['firing-completed']): void {
    const failed = this.failures;
    this.failures = undefined;
    if (!this.publisher.observes('status')) return;
    if (!failed || failed.size === 0) this.status(firing.taskId, firing.items, 'TASK_FINISHED', '');
    else
      this.status(
        firing.taskId,
        firing.items,
        'TASK_ERROR',
        // ElasticJob: the item → stack trace map's toString().
        `{${[...failed].map(([item, cause]) => `${item}=${cause}`).join(', ')}}`,
      );
  }

  'firing-skipped'(skipped: ExecutionEventMap['firing-skipped']): void {
    const { publisher } = this;
    const { jobName } = this.job;
    if (!publisher.observes('firing.skipped') && !publisher.observes('status')) return;
    publisher.publish('firing.skipped', { reason: skipped.reason, items: skipped.items });
    if ((skipped.reason !== 'items-still-running' && skipped.reason !== 'no-items') || !publisher.observes('status'))
      return;
    const taskId = buildTaskId(jobName, skipped.items, this.job.instanceId);
    this.status(taskId, skipped.items, 'TASK_STAGING', `Job '${jobName}' execute begin.`);
    this.status(
      taskId,
      skipped.items,
      'TASK_FINISHED',
      skipped.reason === 'no-items'
        ? `Sharding item for job '${jobName}' is empty.`
        : `Previous job '${jobName}' - shardingItems '${javaItemList(skipped.items)}' is still running, ` +
            'misfired job will start after previous job completed.',
    );
  }

  'item-started'(item: ExecutionEventMap['item-started']): void {
    // The id is shared with the completion's event: made when either is heard.
    if (!this.publisher.observes('item.started') && !this.publisher.observes('item.completed')) return;
    // The dispatch's id when it made one (its kept lines are filed under it), else one made here.
    const id = item.executionId ?? flatRandomUUID();
    (this.ids ??= new Map()).set(item.shardingItem, id);
    if (!this.publisher.observes('item.started')) return;
    const event = this.executionEvent<ItemStartedEvent>('item.started', id, item);
    if (item.scheduledTime) event.scheduledTime = item.scheduledTime;
    if (item.attempt !== undefined) event.attempt = item.attempt;
    this.publisher.publishBuilt(event);
  }

  'item-completed'(item: ExecutionEventMap['item-completed']): void {
    const id = item.executionId ?? this.ids?.get(item.shardingItem);
    if (this.ids?.delete(item.shardingItem) && this.ids.size === 0) this.ids = undefined;
    const failureCause = item.success ? undefined : describeCause(item.failureCause);
    // For the firing's TASK_ERROR status event.
    if (failureCause !== undefined && this.publisher.observes('status'))
      (this.failures ??= new Map()).set(item.shardingItem, failureCause);
    // A retry that succeeded: the item did not fail.
    else if (item.success && item.attempt !== undefined) this.failures?.delete(item.shardingItem);
    if (!this.publisher.observes('item.completed')) return;
    const event = this.executionEvent<ItemCompletedEvent>('item.completed', id ?? flatRandomUUID(), item);
    event.completeTime = item.completeTime;
    event.success = item.success;
    if (failureCause !== undefined) event.failureCause = failureCause;
    if (item.attempt !== undefined) event.attempt = item.attempt;
    this.publisher.publishBuilt(event);
  }

  /**
   * What an item's start and completion events share (ElasticJob's JobExecutionEvent), built as one object without
   * spreads (two items a job, a thousand jobs at one instant); the caller sets its own fields on it.
   */
  private executionEvent<E extends ItemStartedEvent | ItemCompletedEvent>(
    type: E['type'],
    id: string,
    item: ExecutionEventMap['item-started'] | ExecutionEventMap['item-completed'],
  ): E {
    return {
      type,
      jobName: this.job.jobName,
      instanceId: this.job.instanceId,
      at: new Date(),
      id,
      hostname: HOSTNAME,
      ip: this.job.ip,
      taskId: item.taskId,
      source: SOURCES[item.source],
      shardingItem: item.shardingItem,
      startTime: item.startTime,
    } as E;
  }

  private status(taskId: string, items: number[], state: JobStatusState, message: string): void {
    const fields: Omit<JobStatusEvent, OwnFields> = {
      id: flatRandomUUID(),
      originalTaskId: '',
      taskId,
      slaveId: this.job.ip,
      executionType: 'READY',
      shardingItems: items,
      state,
      message,
      creationTime: new Date(),
    };
    this.publisher.publish('status', fields);
  }
}

/** As ElasticJob stores a failure: the stack trace (its message when there is none). */
function describeCause(cause: unknown): string {
  if (cause instanceof Error) return cause.stack ?? `${cause.name}: ${cause.message}`;
  return String(cause);
}
