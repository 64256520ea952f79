import { Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Pool } from 'pg';
import type { Subscription } from 'rxjs';
import type { ElasticJobRegistry } from '../elastic-job.registry.js';
import { describeError } from '../errors/elastic-job.errors.js';
import type {
  ExecutionHistory,
  ExecutionHistoryQuery,
  ExecutionRecord,
} from '../interfaces/execution-history.interface.js';
import { TRACED_EVENT_TYPES, type TracedEvent } from '../tracing/trace-store.interface.js';
import { TRACE_PASS_TIMEOUT_MS, TraceWriter, type TraceWriterOptions } from '../tracing/trace-writer.js';
import { PostgresTraceStore } from './postgres-trace-store.js';

export interface PostgresTracingOptions extends TraceWriterOptions {
  /** Where to write: a connection string (a small pool of its own is made and closed here)... */
  connectionString?: string;
  /** ...or a pool the app already has (not closed here). One of the two. */
  pool?: Pool;
  /** How long the app's shutdown waits for the last events to be written. Default 5000 ms. */
  shutdownFlushTimeoutMilliseconds?: number;
}

/** A query (and a whole pass, on a pool of the app's) that takes longer counts as failed. */
const QUERY_TIMEOUT_MS = TRACE_PASS_TIMEOUT_MS;

/**
 * Execution tracing into PostgreSQL, as ElasticJob's RDB tracing writes it (docs/guide/tracing.md): the
 * jobs' events through a TraceWriter (buffered, batched, retried, outages logged once; tracing/trace-writer.ts) into
 * ElasticJob's tables (PostgresTraceStore, the SQL in job-event-repository.ts). A firing never waits for the database.
 */
export class ElasticJobPostgresTracing implements OnModuleInit, OnApplicationShutdown, ExecutionHistory {
  private readonly logger = new Logger('ElasticJob:tracing');
  private readonly store: PostgresTraceStore;
  private readonly writer: TraceWriter;
  private subscription: Subscription | undefined;

  constructor(
    private readonly jobs: ElasticJobRegistry,
    private readonly options: PostgresTracingOptions,
  ) {
    const ownPool = !options.pool;
    // Every wait bounded: a lock held by a migration, a connection dropped silently.
    const pool =
      options.pool ??
      new Pool({
        connectionString: options.connectionString,
        max: 2,
        connectionTimeoutMillis: 5_000,
        query_timeout: QUERY_TIMEOUT_MS,
        statement_timeout: QUERY_TIMEOUT_MS,
      });
    // A pool's idle client losing its connection (the database restarting) emits 'error': not the app's problem.
    pool.on('error', (error) => this.logger.debug(`idle database connection closed: ${describeError(error)}`));
    this.store = new PostgresTraceStore(pool, ownPool);
    this.writer = new TraceWriter(this.store, options, this.logger);
  }

  /** Written, dropped and waiting events since start. */
  get stats(): { written: number; dropped: number; buffered: number } {
    return this.writer.stats;
  }

  onModuleInit(): void {
    if (!this.jobs.enabled) return;
    this.subscription = this.jobs.events$.subscribe((event) => {
      if (TRACED_EVENT_TYPES.has(event.type)) this.writer.push(event as TracedEvent);
    });
    this.writer.start();
  }

  /**
   * The newest executions written (at most 500), for the console's executions list; bounded like every query here.
   * What is still buffered is not in them yet.
   */
  recentExecutions(query: ExecutionHistoryQuery): Promise<ExecutionRecord[]> {
    return this.store.recentExecutions(query);
  }

  /** Writes what is buffered now (one pass at a time; a pass during a backoff wait does nothing). */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  async onApplicationShutdown(): Promise<void> {
    this.subscription?.unsubscribe();
    const timeoutMs = this.options.shutdownFlushTimeoutMilliseconds ?? 5_000;
    await this.writer.stop(timeoutMs);
    let endTimer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.store.close(),
      new Promise<void>((resolve) => (endTimer = setTimeout(resolve, timeoutMs))),
    ]);
    clearTimeout(endTimer);
  }
}
