import { Pool } from 'pg';
import { describeError } from '../errors/elastic-job.errors.js';
import { TRACE_PASS_TIMEOUT_MS } from '../tracing/trace-writer.js';
import { TracingService, type TracedEventSource } from '../tracing/tracing-service.js';
import type { DatabaseTracingOptions } from '../tracing/tracing-providers.js';
import { PostgresTraceStore } from './postgres-trace-store.js';

export interface PostgresTracingOptions extends DatabaseTracingOptions<Pool> {
  /** Where to write: a connection string (a small pool of its own is made and closed here)... */
  connectionString?: string;
  /** ...or a pool the app already has (not closed here). One of the two. */
  pool?: Pool;
}

/** A query (and a whole pass, on a pool of the app's) that takes longer counts as failed. */
const QUERY_TIMEOUT_MS = TRACE_PASS_TIMEOUT_MS;

/** The pool tracing writes through: the app's, or a small one of its own with every wait bounded. */
function tracingPool(options: PostgresTracingOptions): Pool {
  // Every wait bounded: a lock held by a migration, a connection dropped silently.
  return (
    options.pool ??
    new Pool({
      connectionString: options.connectionString,
      max: 2,
      connectionTimeoutMillis: 5_000,
      query_timeout: QUERY_TIMEOUT_MS,
      statement_timeout: QUERY_TIMEOUT_MS,
    })
  );
}

/**
 * Execution tracing into PostgreSQL, as ElasticJob's RDB tracing writes it (docs/guide/tracing.md): the jobs' events
 * through a TraceWriter (tracing/tracing-service.ts) into ElasticJob's tables (PostgresTraceStore, the SQL in
 * job-event-repository.ts). A firing never waits for the database.
 */
export class ElasticJobPostgresTracing extends TracingService {
  /** `jobs`: the app's ElasticJobRegistry. */
  constructor(jobs: TracedEventSource, options: PostgresTracingOptions) {
    const pool = tracingPool(options);
    super(jobs, new PostgresTraceStore(pool, !options.pool), options);
    // A pool's idle client losing its connection (the database restarting) emits 'error': not the app's problem.
    pool.on('error', (error) => this.logger.debug(`idle database connection closed: ${describeError(error)}`));
  }
}
