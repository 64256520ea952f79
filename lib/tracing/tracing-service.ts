import { Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Observable, Subscription } from 'rxjs';
import type { ElasticJobEvent } from '../events/elastic-job-event.types.js';
import type {
  ExecutionHistory,
  ExecutionHistoryQuery,
  ExecutionLines,
  ExecutionLinesKeeper,
  ExecutionRecord,
} from '../interfaces/execution-history.interface.js';
import { TRACED_EVENT_TYPES, type TracedEvent, type TraceStore } from './trace-store.interface.js';
import { TraceWriter, withinTraceBound, type TraceWriterOptions } from './trace-writer.js';

/** Where the jobs' events come from: the app's ElasticJobRegistry. */
export interface TracedEventSource {
  readonly enabled: boolean;
  readonly events$: Observable<ElasticJobEvent>;
  /** Files items' kept lines with `keeper` too (ElasticJobRegistry.keepItemLines); returns the call that stops it. */
  keepItemLines?(keeper: ExecutionLinesKeeper): () => void;
}

/**
 * The most executions whose lines wait for their item's completion (items running here with `context.logger` read);
 * past it the oldest are forgotten (their lines not written), as the in-memory log forgets its oldest.
 */
const MAX_RUNNING_WITH_LINES = 10_000;

export interface TracingServiceOptions extends TraceWriterOptions {
  /** How long the app's shutdown waits for the last events to be written. Default 5000 ms. */
  shutdownFlushTimeoutMilliseconds?: number;
}

/**
 * What a database's tracing provider is, whatever the database (`ElasticJobPostgresTracing`,
 * `ElasticJobMysqlTracing`): the jobs' events through a TraceWriter (buffered, batched, retried, outages logged once;
 * trace-writer.ts) into its TraceStore, the store's executions for the console, and the last events written at
 * shutdown. A firing never waits for the database (docs/guide/tracing.md). Another database's provider extends it
 * with its own TraceStore.
 * @publicApi
 */
export abstract class TracingService
  implements OnModuleInit, OnApplicationShutdown, ExecutionHistory, ExecutionLinesKeeper
{
  protected readonly logger = new Logger('ElasticJob:tracing');
  private readonly writer: TraceWriter;
  private subscription: Subscription | undefined;
  private stopKeeping: (() => void) | undefined;
  /** The lines of items running here, by execution id: the logger's own objects, written when their item completes. */
  private readonly running = new Map<string, ExecutionLines>();

  protected constructor(
    private readonly source: TracedEventSource,
    private readonly store: TraceStore,
    private readonly serviceOptions: TracingServiceOptions,
  ) {
    this.writer = new TraceWriter(store, serviceOptions, this.logger);
  }

  /** Written, dropped and waiting events since start. */
  get stats(): { written: number; dropped: number; buffered: number } {
    return this.writer.stats;
  }

  onModuleInit(): void {
    if (!this.source.enabled) return;
    this.subscription = this.source.events$.subscribe((event) => {
      if (TRACED_EVENT_TYPES.has(event.type)) this.writer.push(event as TracedEvent);
      if (event.type === 'item.completed' && this.running.size > 0) this.linesCompleted(event);
    });
    // Lines only into a store that reads them back (a TraceStore of the app's own may not know `item.lines`).
    if (this.store.executionLines) this.stopKeeping = this.source.keepItemLines?.(this);
    this.writer.start();
  }

  /**
   * Files a running item's lines (its logger's object, filled as it logs), to be written once the item completed:
   * one row per execution, bounded as the item's logger bounds them (job/policies/item-lines.ts), through the same
   * buffer as the events (a database outage loses none within `maxBufferedEvents`).
   */
  keepLines(executionId: string, lines: ExecutionLines): void {
    this.running.set(executionId, lines);
    if (this.running.size > MAX_RUNNING_WITH_LINES) this.running.delete(this.running.keys().next().value!);
  }

  private linesCompleted(event: Extract<ElasticJobEvent, { type: 'item.completed' }>): void {
    const kept = this.running.get(event.id);
    if (kept === undefined) return;
    this.running.delete(event.id);
    // Read once: an item logger's lines are built when read (job/policies/kept-lines.ts), a new array each time; lines
    // an abandoned item logs after its completion stay in memory only.
    const lines = kept.lines;
    if (lines.length === 0 && kept.dropped === 0) return;
    this.writer.push({
      type: 'item.lines',
      id: event.id,
      jobName: event.jobName,
      completeTime: event.completeTime,
      lines,
      dropped: kept.dropped,
    });
  }

  /**
   * One execution's kept lines from the store (its lines table), for the console's execution detail; undefined when
   * it has none (the item still runs, its lines are not written yet, or it logged none). Bounded like every query.
   */
  executionLines(jobName: string, executionId: string): Promise<ExecutionLines | undefined> {
    if (!this.store.executionLines) return Promise.resolve(undefined);
    return withinTraceBound(this.store.executionLines(jobName, executionId), 'reading execution lines');
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
    this.stopKeeping?.();
    const timeoutMs = this.serviceOptions.shutdownFlushTimeoutMilliseconds ?? 5_000;
    await this.writer.stop(timeoutMs);
    let endTimer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.store.close(),
      new Promise<void>((resolve) => (endTimer = setTimeout(resolve, timeoutMs))),
    ]);
    clearTimeout(endTimer);
  }
}
