import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { ExecutionEvents } from './execution-events.js';
import { buildTaskId } from '../paths.js';
import type { FiringSource } from './firing-state.js';
import type {
  ElasticJobEvent,
  ElasticJobEventOf,
  ElasticJobEventType,
  ExecutionSource,
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

/** Java's `List.toString()`, which ElasticJob's messages and its status table use for item lists: `[0, 1, 2]`. */
export function javaItemList(items: readonly number[]): string {
  return `[${items.join(', ')}]`;
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

  /** Publishes the executor's events as ElasticJob's item (JobExecutionEvent) and status (JobStatusTraceEvent) events. */
  follow(events: ExecutionEvents): () => void {
    // A job runs one firing at a time on an instance, so an item is running at most once here: its number keys the
    // id shared by its start and completion events, and the current firing's failures (for TASK_ERROR). Not the
    // taskId: it lists every item of the firing (tens of kilobytes with thousands of items).
    const ids = new Map<number, string>();
    const failures = new Map<number, string>();
    const { jobName, ip } = this.job;
    const observes = (type: ElasticJobEventType): boolean => this.sink?.observes(type) === true;
    // What an item's start and completion events share (ElasticJob's JobExecutionEvent).
    const executionFields = (
      id: string,
      item: { taskId: string; source: FiringSource; shardingItem: number; startTime: Date },
    ) => ({
      id,
      hostname: HOSTNAME,
      ip,
      taskId: item.taskId,
      source: SOURCES[item.source],
      shardingItem: item.shardingItem,
      startTime: item.startTime,
    });
    const status = (taskId: string, items: number[], state: JobStatusState, message: string) => {
      const fields: Omit<JobStatusEvent, OwnFields> = {
        id: randomUUID(),
        originalTaskId: '',
        taskId,
        slaveId: ip,
        executionType: 'READY',
        shardingItems: items,
        state,
        message,
        creationTime: new Date(),
      };
      this.publish('status', fields);
    };
    const offs = [
      events.on('firing-started', (firing) => {
        if (!observes('status')) return;
        status(firing.taskId, firing.items, 'TASK_STAGING', `Job '${jobName}' execute begin.`);
        status(firing.taskId, firing.items, 'TASK_RUNNING', '');
      }),
      events.on('firing-completed', (firing) => {
        const failed = new Map(failures);
        failures.clear();
        if (!observes('status')) return;
        if (failed.size === 0) status(firing.taskId, firing.items, 'TASK_FINISHED', '');
        else
          status(
            firing.taskId,
            firing.items,
            'TASK_ERROR',
            // ElasticJob: the item → stack trace map's toString().
            `{${[...failed].map(([item, cause]) => `${item}=${cause}`).join(', ')}}`,
          );
      }),
      events.on('firing-skipped', (skipped) => {
        if (!observes('firing.skipped') && !observes('status')) return;
        this.publish('firing.skipped', { reason: skipped.reason, items: skipped.items });
        if ((skipped.reason !== 'items-still-running' && skipped.reason !== 'no-items') || !observes('status')) return;
        const taskId = buildTaskId(jobName, skipped.items, this.job.instanceId);
        status(taskId, skipped.items, 'TASK_STAGING', `Job '${jobName}' execute begin.`);
        status(
          taskId,
          skipped.items,
          'TASK_FINISHED',
          skipped.reason === 'no-items'
            ? `Sharding item for job '${jobName}' is empty.`
            : `Previous job '${jobName}' - shardingItems '${javaItemList(skipped.items)}' is still running, ` +
                'misfired job will start after previous job completed.',
        );
      }),
      events.on('item-started', (item) => {
        // The id is shared with the completion's event: made when either is heard.
        if (!observes('item.started') && !observes('item.completed')) return;
        const id = randomUUID();
        ids.set(item.shardingItem, id);
        this.publish('item.started', {
          ...executionFields(id, item),
          ...(item.scheduledTime ? { scheduledTime: item.scheduledTime } : {}),
        });
      }),
      events.on('item-completed', (item) => {
        const id = ids.get(item.shardingItem);
        ids.delete(item.shardingItem);
        const failureCause = item.success ? undefined : describeCause(item.failureCause);
        // For the firing's TASK_ERROR status event.
        if (failureCause !== undefined && observes('status')) failures.set(item.shardingItem, failureCause);
        if (!observes('item.completed')) return;
        this.publish('item.completed', {
          ...executionFields(id ?? randomUUID(), item),
          completeTime: item.completeTime,
          success: item.success,
          ...(failureCause === undefined ? {} : { failureCause }),
        });
      }),
    ];
    return () => offs.forEach((off) => off());
  }
}

/** As ElasticJob stores a failure: the stack trace (its message when there is none). */
function describeCause(cause: unknown): string {
  if (cause instanceof Error) return cause.stack ?? `${cause.name}: ${cause.message}`;
  return String(cause);
}
