import type { ItemCompletedEvent, ItemStartedEvent, JobStatusEvent } from '../events/elastic-job-event.types.js';
import type { ExecutionHistory } from '../interfaces/execution-history.interface.js';

/** The events a trace store keeps: ElasticJob's JobExecutionEvent (start and completion) and JobStatusTraceEvent. */
export type TracedEvent = ItemStartedEvent | ItemCompletedEvent | JobStatusEvent;

/** Their types, as the jobs' event stream names them. */
export const TRACED_EVENT_TYPES: ReadonlySet<string> = new Set(['item.started', 'item.completed', 'status']);

/**
 * Where execution traces are written: ElasticJob's RDB tracing tables in one database (PostgreSQL's is
 * `nestjs-elastic-job/postgres`, MySQL's `nestjs-elastic-job/mysql`). The store does the I/O only;
 * TraceWriter buffers, batches, retries, bounds every pass and logs outages. @publicApi
 */
export interface TraceStore extends ExecutionHistory {
  /** What the logs call it: `the tracing database`. */
  readonly name: string;
  /** A connection for one pass of writes; released by the session. */
  open(): Promise<TraceSession>;
  /** The store refuses this failure's event whatever happens (a value its column cannot take): dropped, not retried. */
  isRefused(error: unknown): boolean;
  /** The failure says what prepare() made is gone (a table dropped): prepare() runs again at the next pass. */
  isUnprepared(error: unknown): boolean;
  /** Frees what the store holds (its own pool); bounded by the caller. */
  close(): Promise<void>;
}

/** One pass of writes on one connection. */
export interface TraceSession {
  /** Makes the tables if missing; called on a store's first pass and after isUnprepared(). */
  prepare(): Promise<void>;
  /** Writes the events in one transaction, in order; idempotent by event id (a batch may be written twice). */
  write(events: readonly TracedEvent[]): Promise<void>;
  /** Gives the connection back; with the pass's failure, the connection is discarded (it may be mid-query). */
  release(failure?: Error): void;
}
