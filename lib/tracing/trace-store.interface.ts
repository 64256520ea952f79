import type { ItemCompletedEvent, ItemStartedEvent, JobStatusEvent } from '../events/elastic-job-event.types.js';
import type { ExecutionHistory, ExecutionLines } from '../interfaces/execution-history.interface.js';

/**
 * One execution's kept lines (docs/guide/item-policies.md, "Item logs"), written once its item completed into a
 * table of ours beside ElasticJob's (JOB_EXECUTION_LINES): only to a store that reads them back (`executionLines`).
 */
export interface ItemLinesRecord extends ExecutionLines {
  type: 'item.lines';
  /** The execution's id: its JOB_EXECUTION_LOG row's. */
  id: string;
  jobName: string;
  completeTime: Date;
}

/**
 * The events a trace store keeps: ElasticJob's JobExecutionEvent (start and completion) and JobStatusTraceEvent; and
 * items' kept lines, for a store that has `executionLines`.
 */
export type TracedEvent = ItemStartedEvent | ItemCompletedEvent | JobStatusEvent | ItemLinesRecord;

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
  /**
   * One execution's kept lines from the store's lines table; undefined when it has none of it. A store with it is
   * also given `item.lines` records to write.
   */
  executionLines?(jobName: string, executionId: string): Promise<ExecutionLines | undefined>;
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
