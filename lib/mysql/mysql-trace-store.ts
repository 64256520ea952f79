import type { Pool, PoolConnection } from 'mysql2/promise';
import type {
  ExecutionHistoryQuery,
  ExecutionLines,
  ExecutionRecord,
} from '../interfaces/execution-history.interface.js';
import type { TracedEvent, TraceSession, TraceStore } from '../tracing/trace-store.interface.js';
import { withinTraceBound } from '../tracing/trace-writer.js';
import {
  createTablesIfMissing,
  isMysqlDataError,
  MYSQL_ERRORS,
  readExecutionLines,
  readRecentExecutions,
  writeEvents,
} from './mysql-job-event-repository.js';

/** The most status events kept as possibly written; beyond it the oldest are forgotten (a duplicate row at worst). */
const MAX_UNCERTAIN = 10_000;

/**
 * ElasticJob's tracing tables in MySQL (or MariaDB) as a TraceStore (mysql-job-event-repository.ts has the SQL): a
 * pass holds one connection of the pool, discarded when the pass fails; reads of the executions are bounded like
 * every pass.
 */
export class MysqlTraceStore implements TraceStore {
  readonly name = 'the tracing database';
  /** Ids of status events whose COMMIT was sent by a pass that then failed: they may be in the table already. */
  private readonly uncertain = new Set<string>();

  constructor(
    private readonly pool: Pool,
    /** A pool made for tracing is ended at close(); an app's own is left open. */
    private readonly ownPool: boolean,
  ) {}

  async open(): Promise<TraceSession> {
    const connection: PoolConnection = await this.pool.getConnection();
    let inDoubt: readonly TracedEvent[] | undefined;
    return {
      prepare: () => createTablesIfMissing(connection),
      write: async (events: readonly TracedEvent[]) => {
        const uncertain = events.some((event) => this.uncertain.has(event.id));
        await writeEvents(connection, events, uncertain, () => (inDoubt = events));
        inDoubt = undefined;
        for (const event of events) this.uncertain.delete(event.id);
      },
      release: (failure?: Error) => {
        if (failure && inDoubt) this.remember(inDoubt);
        if (failure) connection.destroy();
        else connection.release();
      },
    };
  }

  isRefused(error: unknown): boolean {
    return isMysqlDataError(error);
  }

  isUnprepared(error: unknown): boolean {
    return (error as { errno?: unknown }).errno === MYSQL_ERRORS.noSuchTable;
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

  private remember(events: readonly TracedEvent[]): void {
    for (const event of events) if (event.type === 'status') this.uncertain.add(event.id);
    for (const id of this.uncertain) {
      if (this.uncertain.size <= MAX_UNCERTAIN) break;
      this.uncertain.delete(id);
    }
  }
}
