import type { Logger } from '@nestjs/common';
import { describeError } from '../errors/elastic-job.errors.js';
import { OutageLog } from '../util/outage-log.js';
import type { TracedEvent, TraceSession, TraceStore } from './trace-store.interface.js';

export interface TraceWriterOptions {
  /** Events kept while the store is away or slow; beyond it the oldest are dropped (counted, logged). Default 10 000. */
  maxBufferedEvents?: number;
  /** How often buffered events are written. Default 1000 ms. */
  flushIntervalMilliseconds?: number;
  /** Events written per transaction. Default 500. */
  batchSize?: number;
}

const MAX_RETRY_DELAY_MS = 30_000;
/** The first retry's wait, and the longest one while the buffer overflows. */
const FIRST_RETRY_DELAY_MS = 500;
/** A pass that takes longer counts as failed (a store's connection with no query timeout of its own included). */
export const TRACE_PASS_TIMEOUT_MS = 10_000;

/**
 * `work` within TRACE_PASS_TIMEOUT_MS, or an Error saying that `what` took longer: a store's reads (the console's
 * executions) are bounded like its passes. A failure of `work` after the bound passed is not left unhandled.
 */
export function withinTraceBound<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took over ${TRACE_PASS_TIMEOUT_MS} ms`)), TRACE_PASS_TIMEOUT_MS);
  });
  work.catch(() => undefined);
  return Promise.race([work, timedOut]).finally(() => clearTimeout(timer));
}

/**
 * Writes execution traces into a TraceStore without ever holding a firing up (docs/guide/tracing.md):
 * push() only appends to a buffer; a timer writes it in batches. While the store is down or failing, events wait (up
 * to `maxBufferedEvents`, then the oldest go, counted) and writing is retried with backoff; its outage is logged once
 * each way (util/outage-log.ts). An event the store refuses whatever happens is dropped alone, not with its batch.
 */
export class TraceWriter {
  private buffer: TracedEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private prepared = false;
  /** Consecutive failed passes, for the backoff; 0 when the store answers. */
  private failures = 0;
  private retryAt = 0;
  private dropped = 0;
  private droppedSinceReported = 0;
  private written = 0;
  private droppedSaidAt = -Infinity;
  private readonly outage: OutageLog;

  constructor(
    private readonly store: TraceStore,
    private readonly options: TraceWriterOptions,
    private readonly logger: Logger,
  ) {
    this.outage = new OutageLog(logger, store.name, 'write(s)');
  }

  /** Written, dropped and waiting events since start. */
  get stats(): { written: number; dropped: number; buffered: number } {
    return { written: this.written, dropped: this.dropped, buffered: this.buffer.length };
  }

  /** Queues an event; never waits. */
  push(event: TracedEvent): void {
    this.buffer.push(event);
    const max = this.options.maxBufferedEvents ?? 10_000;
    if (this.buffer.length > max) {
      const excess = this.buffer.length - max;
      this.buffer.splice(0, excess);
      this.countDropped(excess, 'the buffer is full (maxBufferedEvents)');
      // A full buffer loses its oldest events for every one that comes while the backoff waits: once the store is
      // back, a long wait (up to 30 s) would drop the whole outage's backlog for events that came after it. So while
      // it overflows, the store is tried again soon (one pass at a time, each bounded).
      this.retryAt = Math.min(this.retryAt, Date.now() + FIRST_RETRY_DELAY_MS);
    }
  }

  /** Starts writing every `flushIntervalMilliseconds`. */
  start(): void {
    this.timer = setInterval(() => void this.flush(), this.options.flushIntervalMilliseconds ?? 1_000);
    this.timer.unref();
  }

  /** Writes what is buffered now (one pass at a time; a pass during a backoff wait does nothing). */
  flush(): Promise<void> {
    this.flushing ??= this.writeBuffered().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /** Stops the timer and writes what is left, for up to `timeoutMs` (the backoff is not waited for). */
  async stop(timeoutMs: number): Promise<void> {
    clearInterval(this.timer);
    this.retryAt = 0;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.flush(), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
    if (this.buffer.length > 0)
      this.logger.warn(
        `${this.buffer.length} execution trace event(s) not written at shutdown (${this.store.name} away)`,
      );
  }

  /** Dropped events are said when they are dropped (at most once a minute), and again when the store is back. */
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
    let session: TraceSession | undefined;
    let passTimer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      passTimer = setTimeout(
        () => reject(new Error(`a write took over ${TRACE_PASS_TIMEOUT_MS} ms`)),
        TRACE_PASS_TIMEOUT_MS,
      );
    });
    timedOut.catch(() => undefined);
    /** `work` within the pass's bound; a rejection it has after the bound passed is not left unhandled. */
    const bounded = <T>(work: Promise<T>): Promise<T> => {
      work.catch(() => undefined);
      return Promise.race([work, timedOut]);
    };
    let failure: Error | undefined;
    try {
      session = await bounded(this.store.open());
      const open = session;
      if (!this.prepared) {
        await bounded(open.prepare());
        this.prepared = true;
      }
      while (this.buffer.length > 0) {
        const batch = this.buffer.slice(0, batchSize);
        try {
          await bounded(open.write(batch));
        } catch (error) {
          if (!this.store.isRefused(error)) throw error;
          // An event the store refuses whatever happens must not hold the others: one by one, it is dropped.
          for (const event of batch) {
            await bounded(
              open.write([event]).catch((single: unknown) => {
                if (!this.store.isRefused(single)) throw single;
                this.countDropped(1, `${this.store.name} refused one (${describeError(single)})`);
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
          this.droppedSinceReported > 0 ? `; ${this.droppedSinceReported} event(s) were dropped meanwhile` : '';
        if (this.outage.away) this.outage.recovered(`backlog written${dropped}`);
        else this.logger.log(`${this.droppedSinceReported} execution trace event(s) were dropped (said above)`);
      }
      this.failures = 0;
      this.droppedSinceReported = 0;
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
      if (this.store.isUnprepared(error)) this.prepared = false;
      this.failures++;
      const delay = Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * 2 ** Math.min(this.failures - 1, 6));
      this.retryAt = Date.now() + delay;
      this.outage.failed(error, `${this.buffer.length} event(s) wait, writing is retried with backoff`);
      this.logger.debug(`cannot write execution traces (${describeError(error)}); retrying in ${delay} ms`);
    } finally {
      clearTimeout(passTimer);
      session?.release(failure);
    }
  }
}
