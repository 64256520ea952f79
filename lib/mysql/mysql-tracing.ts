import { createPool, type Pool } from 'mysql2/promise';
import { TracingService, type TracedEventSource } from '../tracing/tracing-service.js';
import type { DatabaseTracingOptions } from '../tracing/tracing-providers.js';
import { MysqlTraceStore } from './mysql-trace-store.js';

export interface MysqlTracingOptions extends DatabaseTracingOptions<Pool> {
  /**
   * Where to write: a connection string naming the database, `mysql://user:password@host:3306/database` (a small
   * pool of its own is made and closed here; its sessions in UTC, so that the TIMESTAMP columns hold the instants)...
   */
  connectionString?: string;
  /** ...or a pool the app already has (`mysql2/promise`'s, not closed here; its time zone settings as they are). */
  pool?: Pool;
}

/**
 * Sets a new connection's session to UTC, queued before any query of the pool's. The connection the pool's
 * 'connection' event gives is the callback-style one (mysql2's lib/promise/pool.js re-emits the core pool's events,
 * whatever its promise typings say): a callback, so that a failure is not an unhandled 'error' event.
 */
export function inUtc(connection: unknown): void {
  const core = connection as { query(sql: string, callback: (error: Error | null) => void): unknown; destroy(): void };
  // A connection whose SET failed would write TIMESTAMPs in the server's zone, hours off: it is dropped instead,
  // so the queries queued behind it fail and the writer retries them on a connection that is in UTC.
  core.query("SET time_zone = '+00:00'", (error) => error && core.destroy());
}

/** The pool tracing writes through: the app's, or a small one of its own in UTC with every wait bounded. */
function tracingPool(options: MysqlTracingOptions): Pool {
  if (options.pool) return options.pool;
  const pool = createPool({
    uri: options.connectionString,
    connectionLimit: 2,
    maxIdle: 2,
    connectTimeout: 5_000,
    // Dates sent and read as UTC, and the session's TIMESTAMP conversion in UTC too: the instants stay whole
    // whatever the server's or the app's zone (Java ElasticJob's JDBC driver writes instants as well).
    timezone: 'Z',
    enableKeepAlive: true,
  });
  pool.on('connection', (connection) => inUtc(connection));
  return pool;
}

/**
 * Execution tracing into MySQL (or MariaDB), as ElasticJob's RDB tracing writes it (docs/guide/tracing.md): the
 * jobs' events through a TraceWriter (tracing/tracing-service.ts) into ElasticJob's tables (MysqlTraceStore, the SQL
 * in mysql-job-event-repository.ts). A firing never waits for the database. Every query is bounded (10 s).
 */
export class ElasticJobMysqlTracing extends TracingService {
  /** `jobs`: the app's ElasticJobRegistry. */
  constructor(jobs: TracedEventSource, options: MysqlTracingOptions) {
    super(jobs, new MysqlTraceStore(tracingPool(options), !options.pool), options);
  }
}
