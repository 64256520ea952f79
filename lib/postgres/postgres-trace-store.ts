import type { Pool, PoolClient } from 'pg';
import type {
  ExecutionHistoryQuery,
  ExecutionLines,
  ExecutionRecord,
} from '../interfaces/execution-history.interface.js';
import type { TracedEvent, TraceSession, TraceStore } from '../tracing/trace-store.interface.js';
import { withinTraceBound } from '../tracing/trace-writer.js';
import {
  CREATE_TABLES,
  isDataError,
  readExecutionLines,
  readRecentExecutions,
  writeEvents,
} from './job-event-repository.js';

/** PostgreSQL's undefined_table: a tracing table dropped under us. */
const UNDEFINED_TABLE = '42P01';

/**
 * ElasticJob's tracing tables in PostgreSQL as a TraceStore (job-event-repository.ts has the SQL): a pass holds one
 * client of the pool; reads of the executions are bounded like every pass.
 */
export class PostgresTraceStore implements TraceStore {
  readonly name = 'the tracing database';

  constructor(
    private readonly pool: Pool,
    /** A pool made for tracing is ended at close(); an app's own is left open. */
    private readonly ownPool: boolean,
  ) {}

  async open(): Promise<TraceSession> {
    const client: PoolClient = await this.pool.connect();
    return {
      prepare: async () => {
        for (const statement of CREATE_TABLES) await client.query(statement);
      },
      write: (events: readonly TracedEvent[]) => writeEvents(client, events),
      release: (failure?: Error) => client.release(failure),
    };
  }

  isRefused(error: unknown): boolean {
    return isDataError(error);
  }

  isUnprepared(error: unknown): boolean {
    return (error as { code?: unknown }).code === UNDEFINED_TABLE;
  }

  /** The newest executions written (at most 500), for the console; bounded like every pass. */
  recentExecutions(query: ExecutionHistoryQuery): Promise<ExecutionRecord[]> {
    return withinTraceBound(readRecentExecutions(this.pool, query), 'reading executions');
  }

  /** One execution's kept lines (our JOB_EXECUTION_LINES); the caller bounds it. */
  executionLines(jobName: string, executionId: string): Promise<ExecutionLines | undefined> {
    return readExecutionLines(this.pool, jobName, executionId);
  }

  async close(): Promise<void> {
    if (this.ownPool) await this.pool.end().catch(() => undefined);
  }
}
