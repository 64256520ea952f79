import type { Logger } from '@nestjs/common';
import type { FiringSkippedEvent } from '../../events/elastic-job-event.types.js';
import type { FiringSource } from './firing-state.js';
import type { ShardingContexts } from '../../interfaces/job-listener.interface.js';
import { describeError } from '../../errors/elastic-job.errors.js';
import { afterThisInstantCall } from '../../util/after-this-instant.js';

/** Common to every execution event of one job on this instance. */
interface ExecutionEventBase {
  jobName: string;
  /** `{ip}@-@{pid}` */
  instanceId: string;
  source: FiringSource;
}

/** What each execution event carries, by name. */
export interface ExecutionEventMap {
  /** A firing has its items (running markers written) and starts them. */
  'firing-started': ExecutionEventBase & { taskId: string; items: number[]; startTime: Date };
  /** A firing did not run its items: `reason` says why. */
  'firing-skipped': ExecutionEventBase & {
    /**
     * `rejoining`: connected with a new session, not registered on it yet (caught up once it is). `no-items`: none
     * of the job's items is this instance's (or they are all disabled or taken over).
     */
    reason: FiringSkippedEvent['reason'];
    items: number[];
  };
  /** `scheduledTime`: the cron instant, for a firing at one. */
  'item-started': ExecutionEventBase & {
    taskId: string;
    shardingItem: number;
    startTime: Date;
    scheduledTime?: Date;
    /** The execution's id (the public events' `id`), made per attempt. */
    executionId?: string;
    /** The attempt's number, when the job retries failed items. */
    attempt?: number;
  };
  'item-completed': ExecutionEventBase & {
    taskId: string;
    shardingItem: number;
    startTime: Date;
    scheduledTime?: Date;
    executionId?: string;
    attempt?: number;
    completeTime: Date;
    success: boolean;
    failureCause?: unknown;
  };
  /** Every item of the firing is over (markers removed); `success` is false when any item failed. */
  'firing-completed': ExecutionEventBase & {
    taskId: string;
    items: number[];
    startTime: Date;
    completeTime: Date;
    success: boolean;
  };
}

export type ExecutionEventName = keyof ExecutionEventMap;
export type ExecutionListener<E extends ExecutionEventName> = (event: ExecutionEventMap[E]) => unknown;
/**
 * One listener object for several events (a method per event it hears, called with the object as `this`): what a
 * job's permanent listeners are, since a closure per event and its unsubscribe call cost a job ~2 KB (issue 32).
 */
export type ExecutionObserver = { readonly [E in ExecutionEventName]?: ExecutionListener<E> };

const NO_OBSERVERS: ReadonlyArray<ExecutionObserver> = Object.freeze([]);

/**
 * The execution events of one job on this instance. Emitting never delays a firing: listeners are called after
 * the emitting code has moved on, and after the other jobs' items of this instant have started
 * (util/after-this-instant.ts), each on its own; one that throws or rejects is logged and
 * the others still hear the event.
 */
export class ExecutionEvents {
  /**
   * Replaced, never changed in place (an emit walks the array it found without copying it); concat makes an array of
   * exactly the observers. A job has two or three, each hearing several events.
   */
  private observers: ReadonlyArray<ExecutionObserver> = NO_OBSERVERS;

  constructor(private readonly logger: Logger) {}

  /** Adds an observer (once); returns the call that removes it. */
  observe(observer: ExecutionObserver): () => void {
    if (!this.observers.includes(observer)) this.observers = this.observers.concat(observer);
    return () => this.unobserve(observer);
  }

  unobserve(observer: ExecutionObserver): void {
    this.observers = this.observers.filter((other) => other !== observer);
  }

  /** One listener for one event (added once); returns the unsubscribe call. */
  on<E extends ExecutionEventName>(name: E, listener: ExecutionListener<E>): () => void {
    const known = this.observers.find((observer) => observer[name] === listener);
    return this.observe(known ?? ({ [name]: listener } as ExecutionObserver));
  }

  emit<E extends ExecutionEventName>(name: E, event: ExecutionEventMap[E]): void {
    for (const observer of this.observers) {
      if (!observer[name]) continue;
      // A queued call, not a closure an observer and event (two items a job, a thousand jobs at one instant).
      afterThisInstantCall(deliver, this, observer, name, event as ExecutionEventMap[ExecutionEventName]);
    }
  }

  /** @internal Logs a listener's failure (deliver() below). */
  listenerFailed(name: string, error: unknown): void {
    this.logger.warn(`a '${name}' listener failed: ${describeError(error)}`);
  }
}

/** Calls one observer's listener of an event, after the instant (ExecutionEvents.emit). */
function deliver(
  events: ExecutionEvents,
  observer: ExecutionObserver,
  name: ExecutionEventName,
  event: ExecutionEventMap[ExecutionEventName],
): void {
  try {
    const result = (observer[name] as ExecutionListener<ExecutionEventName>).call(observer, event as never);
    if (result instanceof Promise) result.catch((error: unknown) => events.listenerFailed(name, error));
  } catch (error) {
    events.listenerFailed(name, error);
  }
}

/**
 * Called around each firing on this instance (its items, and the catch-up runs of misfired items that follow in
 * the same firing; a firing with no item here too, with none), and awaited: the seam of job listeners
 * (`beforeJobExecuted` / `afterJobExecuted`, called as ElasticJob calls them). A hook that throws is logged; the
 * firing goes on.
 */
export interface FiringHooks {
  beforeFiring?(contexts: ShardingContexts): Promise<void> | void;
  /** `success`: no item failed and nothing went wrong around them. */
  afterFiring?(contexts: ShardingContexts, outcome: { success: boolean }): Promise<void> | void;
}
