/**
 * The events every instance emits about its jobs (docs/guide/events-and-listeners.md, "Events"). Item and status events
 * carry the fields of ElasticJob's `JobExecutionEvent` and `JobStatusTraceEvent` (docs/reference/elasticjob.md §7), so
 * they can be stored where ElasticJob's console reads them; coordination events tell what ElasticJob only logs.
 */

/** Why an item ran: its firing (cron or manual trigger), a misfire catch-up, or items taken over from a crashed instance. */
export type ExecutionSource = 'NORMAL_TRIGGER' | 'MISFIRE' | 'FAILOVER';

/** What every event of a job on this instance carries. */
interface JobEventBase {
  jobName: string;
  /** This instance, `{ip}@-@{pid}`. */
  instanceId: string;
  /** When the event happened here. */
  at: Date;
}

/**
 * ElasticJob's `JobExecutionEvent`: one at the start of an item and one at its end, with the same `id`.
 * `failureCause` is the error's stack (or message), as ElasticJob stores it.
 */
export interface JobExecutionEvent extends JobEventBase {
  /** Shared by the start and the completion of one item execution (a UUID). */
  id: string;
  hostname: string;
  ip: string;
  taskId: string;
  source: ExecutionSource;
  shardingItem: number;
  startTime: Date;
  /**
   * Which run of the item in its firing, when its job retries failed items (`@ShardedJob({ retry })`): 1, 2, ...
   * Each attempt is an execution of its own, with its own `id`. Not ElasticJob's.
   */
  attempt?: number;
}

export interface ItemStartedEvent extends JobExecutionEvent {
  type: 'item.started';
  /** The cron instant of the firing (not ElasticJob's; undefined for a trigger, a catch-up or a failover run). */
  scheduledTime?: Date;
}

export interface ItemCompletedEvent extends JobExecutionEvent {
  type: 'item.completed';
  completeTime: Date;
  success: boolean;
  failureCause?: string;
}

/** The states ElasticJob-Lite posts for a firing (its `JobStatusTraceEvent.State` has more, used by its cloud flavour). */
export type JobStatusState = 'TASK_STAGING' | 'TASK_RUNNING' | 'TASK_FINISHED' | 'TASK_ERROR';

/**
 * ElasticJob's `JobStatusTraceEvent`, per firing on this instance: TASK_STAGING when it begins, then TASK_RUNNING and
 * TASK_FINISHED (or TASK_ERROR with the items' failures), or TASK_FINISHED at once when it has no item to run or its
 * items still run (ElasticJob's messages).
 */
export interface JobStatusEvent extends JobEventBase {
  type: 'status';
  id: string;
  /** Always '' for ElasticJob-Lite; kept for its table. */
  originalTaskId: string;
  taskId: string;
  /** The instance's IP (ElasticJob's `slaveId`). */
  slaveId: string;
  executionType: 'READY' | 'FAILOVER';
  shardingItems: number[];
  state: JobStatusState;
  message: string;
  creationTime: Date;
}

export interface LeadershipEvent extends JobEventBase {
  /** This instance became the job's leader, or stopped being it. */
  type: 'leadership.gained' | 'leadership.lost';
}

export interface ShardingAssignedEvent extends JobEventBase {
  /** After a resharding, the items this instance owns changed (may be none). */
  type: 'sharding.assigned';
  items: number[];
  previousItems: number[];
}

export interface SessionEvent extends JobEventBase {
  /**
   * `session.lost`: the ZooKeeper session ended, items running here had their signal aborted and none starts until
   * `session.rejoined`: the job registered again on a new session.
   */
  type: 'session.lost' | 'session.rejoined';
}

export interface FailoverClaimedEvent extends JobEventBase {
  /** This instance took over an item of a crashed instance; it runs right after. */
  type: 'failover.claimed';
  shardingItem: number;
}

export interface MisfireFlaggedEvent extends JobEventBase {
  /** A firing found these items still running: flagged as misfired, they run again once they finish. */
  type: 'misfire.flagged';
  items: number[];
}

export interface FiringSkippedEvent extends JobEventBase {
  /**
   * A firing ran no item here, and why: not connected to ZooKeeper; `rejoining` a new session; its items still
   * running from an earlier firing (`items-still-running`, flagged as misfired) or the previous firing still running
   * here (`previous-firing-running`); `no-items` of the job are this instance's; `halted`: an operator shut the
   * job down here before its items started; or `overtaken`: the resharding it waited for ended after the next
   * instant came, so its `items` run once as that instant's catch-up (`CATCH_UP`) instead of late for this one
   * (docs/guide/guarantees.md).
   */
  type: 'firing.skipped';
  reason:
    | 'not-connected'
    | 'rejoining'
    | 'items-still-running'
    | 'previous-firing-running'
    | 'no-items'
    | 'halted'
    | 'overtaken';
  items: number[];
}

/**
 * An operator changed the job's configuration through this app (the console), with who did it when the app's guard
 * says (`ElasticJobConsoleOptions.auditUser`) and each changed field's value before and after. The audit trail
 * ElasticJob's console keeps nowhere.
 */
export interface ConfigurationChangedEvent extends JobEventBase {
  type: 'config.changed';
  /** The user the console's `auditUser` named; undefined when the app gives none. */
  by: string | undefined;
  /** Where the change was made. */
  via: 'console';
  /** The console's registry the job is in, when not the app's own (`ElasticJobConsoleOptions.registries`). */
  registry?: string;
  /** The changed fields only, each with its stored value before and after. */
  changes: Record<string, { before: unknown; after: unknown }>;
}

/**
 * A workflow's run moved (docs/guide/workflows.md, "Events"), told by the instance coordinating it: the run started
 * (its first steps did), a step started, completed or failed, the run completed or failed. `jobName` is the step's job
 * for a step's event, the workflow's name for a run's.
 */
export interface WorkflowEvent extends JobEventBase {
  type:
    | 'workflow.run.started'
    | 'workflow.step.started'
    | 'workflow.step.completed'
    | 'workflow.step.failed'
    | 'workflow.run.completed'
    | 'workflow.run.failed';
  workflow: string;
  runId: string;
  /** The step, for a step's event. */
  step?: string;
  /** The items a step started with, or those that failed. */
  items?: number[];
}

export type ElasticJobEvent =
  | ItemStartedEvent
  | ItemCompletedEvent
  | JobStatusEvent
  | LeadershipEvent
  | ShardingAssignedEvent
  | SessionEvent
  | FailoverClaimedEvent
  | MisfireFlaggedEvent
  | FiringSkippedEvent
  | ConfigurationChangedEvent
  | WorkflowEvent;

export type ElasticJobEventType = ElasticJobEvent['type'];

/** Every event type, for validation (a record, so that a type added above must be added here). */
const EVENT_TYPES: Record<ElasticJobEventType, true> = {
  'item.started': true,
  'item.completed': true,
  status: true,
  'leadership.gained': true,
  'leadership.lost': true,
  'sharding.assigned': true,
  'session.lost': true,
  'session.rejoined': true,
  'failover.claimed': true,
  'misfire.flagged': true,
  'firing.skipped': true,
  'config.changed': true,
  'workflow.run.started': true,
  'workflow.step.started': true,
  'workflow.step.completed': true,
  'workflow.step.failed': true,
  'workflow.run.completed': true,
  'workflow.run.failed': true,
};
export const ELASTIC_JOB_EVENT_TYPES = Object.keys(EVENT_TYPES) as readonly ElasticJobEventType[];

/** The event of one type: `ElasticJobEventOf<'item.completed'>`. */
export type ElasticJobEventOf<T extends ElasticJobEventType> = Extract<ElasticJobEvent, { type: T }>;
