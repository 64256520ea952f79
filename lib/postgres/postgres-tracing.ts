import { Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Pool, type PoolClient } from 'pg';
import type { Subscription } from 'rxjs';
import type { ElasticJobRegistry } from '../elastic-job.registry.js';
import { describeError } from '../errors/elastic-job.errors.js';
import type {
  ExecutionHistory,
  ExecutionHistoryQuery,
  ExecutionRecord,
} from '../interfaces/execution-history.interface.js';
import {
  CREATE_TABLES,
  isDataError,
  readRecentExecutions,
  writeEvents,
  type TracedEvent,
} from './job-event-repository.js';
import { OutageLog } from '../util/outage-log.js';

export interface PostgresTracingOptions {
  /** Where to write: a connection string (a small pool of its own is made and closed here)... */
  connectionString?: string;
  /** ...or a pool the app already has (not closed here). One of the two. */
  pool?: Pool;
  /** Events kept while the database is away or slow; beyond it the oldest are dropped (counted, logged). Default 10 000. */
  maxBufferedEvents?: number;
  /** How often buffered events are written. Default 1000 ms. */
  flushIntervalMilliseconds?: number;
  /** Events written per transaction. Default 500. */
  batchSize?: number;
  /** How long the app's shutdown waits for the last events to be written. Default 5000 ms. */
  shutdownFlushTimeoutMilliseconds?: number;
}

const TRACED: ReadonlySet<string> = new Set(['item.started', 'item.completed', 'status']);
const MAX_RETRY_DELAY_MS = 30_000;
/** A query (and a whole pass, on a pool of the app's) that takes longer counts as failed. */
const QUERY_TIMEOUT_MS = 10_000;

/**
 * Execution tracing into PostgreSQL, as ElasticJob's RDB tracing writes it (README "Tracing into PostgreSQL").
 * Subscribing only appends to a buffer, so a firing never waits for the database; a timer writes the buffer in
 * batches. While the database is down or failing, events wait (up to `maxBufferedEvents`, then the oldest go,
 * counted) and writing is retried with backoff; when it answers again the tables are made if missing, the backlog
 * is written, and what was dropped is logged.
 */
export class ElasticJobPostgresTracing implements OnModuleInit, OnApplicationShutdown, ExecutionHistory {
  private readonly logger = new Logger('ElasticJob:tracing');
  private readonly outage = new OutageLog(this.logger, 'the tracing database', 'write(s)');
  private readonly pool: Pool;
  private readonly ownPool: boolean;
  private buffer: TracedEvent[] = [];
  private subscription: Subscription | undefined;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private tablesReady = false;
  /** Consecutive failed writes, for the backoff; 0 when the database answers. */
  private failures = 0;
  private retryAt = 0;
  private dropped = 0;
  private droppedSinceReported = 0;
  private written = 0;
  private droppedSaidAt = -Infinity;

  constructor(
    private readonly jobs: ElasticJobRegistry,
    private readonly options: PostgresTracingOptions,
  ) {
    if (options.pool) {
      this.pool = options.pool;
      this.ownPool = false;
    } else {
      // Every wait bounded: a lock held by a migration, a connection dropped silently.
      this.pool = new Pool({
        connectionString: options.connectionString,
        max: 2,
        connectionTimeoutMillis: 5_000,
        query_timeout: QUERY_TIMEOUT_MS,
        statement_timeout: QUERY_TIMEOUT_MS,
      });
      this.ownPool = true;
    }
    // A pool's idle client losing its connection (the database restarting) emits 'error': not the app's problem.
    this.pool.on('error', (error) => this.logger.debug(`idle database connection closed: ${describeError(error)}`));
  }

  /** Written, dropped and waiting events since start. */
  get stats(): { written: number; dropped: number; buffered: number } {
    return { written: this.written, dropped: this.dropped, buffered: this.buffer.length };
  }

  onModuleInit(): void {
    if (!this.jobs.enabled) return;
    this.subscription = this.jobs.events$.subscribe((event) => {
      if (!TRACED.has(event.type)) return;
      this.buffer.push(event as TracedEvent);
      const max = this.options.maxBufferedEvents ?? 10_000;
      if (this.buffer.length > max) {
        const excess = this.buffer.length - max;
        this.buffer.splice(0, excess);
        this.countDropped(excess, 'the buffer is full (maxBufferedEvents)');
      }
    });
    this.timer = setInterval(() => void this.flush(), this.options.flushIntervalMilliseconds ?? 1_000);
    this.timer.unref();
  }

  /**
   * The newest executions written (at most 500), for the console's executions list; bounded like every query here.
   * What is still buffered is not in them yet.
   */
  recentExecutions(query: ExecutionHistoryQuery): Promise<ExecutionRecord[]> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`reading executions took over ${QUERY_TIMEOUT_MS} ms`)),
        QUERY_TIMEOUT_MS,
      );
    });
    const work = readRecentExecutions(this.pool, query);
    work.catch(() => undefined); // a failure after the bound passed is not left unhandled
    return Promise.race([work, timedOut]).finally(() => clearTimeout(timer));
  }

  /** Writes what is buffered now (one pass at a time; a pass during a backoff wait does nothing). */
  flush(): Promise<void> {
    this.flushing ??= this.writeBuffered().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /** Dropped events are said when they are dropped (at most once a minute), and again when the database is back. */
  private countDropped(count: number, why: string): void {
    this.dropped += count;
    this.droppedSinceReported += count;
    const now = Date.now();
    if (now - this.droppedSaidAt >= 60_000) {
      this.droppedSaidAt = now;
      this.logger.warn(`execution trace events dropped: ${why} (${this.dropped} since start)`);
    }
  }

  private async writeBuffered(): Promise<void> {
    if (this.buffer.length === 0 || Date.now() < this.retryAt) return;
    const batchSize = this.options.batchSize ?? 500;
    let client: PoolClient | undefined;
    // A pass is bounded too (a pool of the app's may have no query timeout): its client is then discarded.
    let passTimer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      passTimer = setTimeout(() => reject(new Error(`a write took over ${QUERY_TIMEOUT_MS} ms`)), QUERY_TIMEOUT_MS);
    });
    timedOut.catch(() => undefined);
    /** `work` within the pass's bound; a rejection it has after the bound passed is not left unhandled. */
    const bounded = <T>(work: Promise<T>): Promise<T> => {
      work.catch(() => undefined);
      return Promise.race([work, timedOut]);
    };
    let failure: Error | undefined;
    try {
      client = await bounded(this.pool.connect());
      const connected = client;
      if (!this.tablesReady) {
        for (const statement of CREATE_TABLES) await bounded(connected.query(statement));
        this.tablesReady = true;
      }
      while (this.buffer.length > 0) {
        const batch = this.buffer.slice(0, batchSize);
        try {
          await bounded(writeEvents(connected, batch));
        } catch (error) {
          if (!isDataError(error)) throw error;
          // An event the database refuses whatever happens must not hold the others: one by one, it is dropped.
          for (const event of batch) {
            await bounded(
              writeEvents(connected, [event]).catch((single: unknown) => {
                if (!isDataError(single)) throw single;
                this.countDropped(1, `the database refused one (${describeError(single)})`);
              }),
            );
          }
        }
        // Events dropped meanwhile shortened the front of the buffer: remove what was written, wherever it is now.
        const written = new Set(batch);
        this.buffer = this.buffer.filter((event) => !written.has(event));
        this.written += batch.length;
      }
      if (this.failures > 0 || this.droppedSinceReported > 0) {
        const dropped =
          this.droppedSinceReported > 0
            ? `; ${this.droppedSinceReported} event(s) were dropped while it was away (maxBufferedEvents)`
            : '';
        if (this.outage.away) this.outage.recovered(`backlog written${dropped}`);
        else this.logger.log(`${this.droppedSinceReported} execution trace event(s) were dropped (said above)`);
      }
      this.failures = 0;
      this.droppedSinceReported = 0;
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
      // A table dropped under us is made again at the next pass.
      if ((error as { code?: string }).code === '42P01') this.tablesReady = false;
      this.failures++;
      const delay = Math.min(MAX_RETRY_DELAY_MS, 500 * 2 ** Math.min(this.failures - 1, 6));
      this.retryAt = Date.now() + delay;
      this.outage.failed(error, `${this.buffer.length} event(s) wait, writing is retried with backoff`);
      this.logger.debug(`cannot write execution traces (${describeError(error)}); retrying in ${delay} ms`);
    } finally {
      clearTimeout(passTimer);
      // A client whose pass failed may be mid-query: destroyed rather than returned to the pool.
      client?.release(failure);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.subscription?.unsubscribe();
    clearInterval(this.timer);
    const timeoutMs = this.options.shutdownFlushTimeoutMilliseconds ?? 5_000;
    this.retryAt = 0;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.flush(), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
    if (this.buffer.length > 0)
      this.logger.warn(`${this.buffer.length} execution trace event(s) not written at shutdown (database away)`);
    if (this.ownPool) {
      let endTimer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.pool.end().catch(() => undefined),
        new Promise<void>((resolve) => (endTimer = setTimeout(resolve, timeoutMs))),
      ]);
      clearTimeout(endTimer);
    }
  }
}
