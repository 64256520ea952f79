import { Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Observable, Subscription } from 'rxjs';
import type { ElasticJobEvent } from '../events/elastic-job-event.types.js';
import type {
  ExecutionHistory,
  ExecutionHistoryQuery,
  ExecutionRecord,
} from '../interfaces/execution-history.interface.js';
import { TRACED_EVENT_TYPES, type TracedEvent, type TraceStore } from './trace-store.interface.js';
import { TraceWriter, type TraceWriterOptions } from './trace-writer.js';

/** Where the jobs' events come from: the app's ElasticJobRegistry. */
export interface TracedEventSource {
  readonly enabled: boolean;
  readonly events$: Observable<ElasticJobEvent>;
}

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
export abstract class TracingService implements OnModuleInit, OnApplicationShutdown, ExecutionHistory {
  protected readonly logger = new Logger('ElasticJob:tracing');
  private readonly writer: TraceWriter;
  private subscription: Subscription | undefined;

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
