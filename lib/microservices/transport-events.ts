import {
  Logger,
  type BeforeApplicationShutdown,
  type FactoryProvider,
  type InjectionToken,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import type { ClientProxy } from '@nestjs/microservices';
import { firstValueFrom, timeout, type Subscription } from 'rxjs';
import { ElasticJobRegistry } from '../elastic-job.registry.js';
import { describeError, InvalidOperationError } from '../errors/elastic-job.errors.js';
import { backoffMs } from '../util/deferred.js';
import { OutageLog } from '../util/outage-log.js';
import { DEFAULT_PREFIX, positiveTimer } from './microservice-options.js';
import {
  ELASTIC_JOB_EVENT_TYPES,
  type ElasticJobEvent,
  type ElasticJobEventType,
} from '../events/elastic-job-event.types.js';

export interface TransportEventsOptions {
  /** The `ClientProxy` to emit through: the name given to `ClientsModule.register()` (or any provider token). */
  client: InjectionToken;
  /** Events go out as `{prefix}.{type}`, e.g. `elastic-job.item.completed`. Default 'elastic-job'. */
  prefix?: string;
  /** The event types sent; every type when omitted. */
  types?: readonly ElasticJobEventType[];
  /** Events kept while the transport is away; beyond it the oldest are dropped (counted, logged). Default 10 000. */
  maxBufferedEvents?: number;
  /** How long one emit may take before the transport counts as away. Default 5000 ms. */
  emitTimeoutMilliseconds?: number;
}

const MAX_RETRY_DELAY_MS = 30_000;

/**
 * Publishes the jobs' events through a Nest microservice transport (docs/guide/microservices.md): `client.emit()`,
 * fire-and-forget, in order, never from inside a firing (a subscriber only queues). While the transport is away
 * (the broker down, the peer not listening) events wait in a bounded buffer and sending is retried with backoff;
 * what had to be dropped is counted and logged. Delivery is at least once: an emit that times out is sent again,
 * and a transport that held the first may deliver both (item and status events carry an `id`). Dates arrive as ISO
 * strings (JSON). One per module (a second `transportEvents()` provider replaces the first).
 */
export class ElasticJobTransportEvents implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('ElasticJob:transport-events');
  private readonly outage = new OutageLog(this.logger, 'the events transport', 'emit(s)');
  private readonly queue: ElasticJobEvent[] = [];
  private subscription: Subscription | undefined;
  private sending = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private dropped = 0;
  private droppedSinceReported = 0;
  private sent = 0;
  private closed = false;
  private draining: Promise<void> = Promise.resolve();

  constructor(
    private readonly jobs: ElasticJobRegistry,
    private readonly client: ClientProxy,
    private readonly options: TransportEventsOptions,
  ) {}

  /** Sent, dropped and waiting events since start. */
  get stats(): { sent: number; dropped: number; buffered: number } {
    return { sent: this.sent, dropped: this.dropped, buffered: this.queue.length };
  }

  onModuleInit(): void {
    if (!this.jobs.enabled) return;
    const types = this.options.types && new Set(this.options.types);
    const max = this.options.maxBufferedEvents ?? 10_000;
    this.subscription = this.jobs.events$.subscribe((event) => {
      if (types && !types.has(event.type)) return;
      this.queue.push(event);
      if (this.queue.length > max) {
        this.queue.shift();
        this.dropped++;
        this.droppedSinceReported++;
        if (this.droppedSinceReported === 1) this.logger.warn('events dropped: the buffer is full (maxBufferedEvents)');
      }
      this.kick();
    });
  }

  private kick(): void {
    if (this.sending || this.retryTimer || this.closed) return;
    this.sending = true;
    this.draining = this.drain();
  }

  /** Sends the queue in order; `sending` is cleared in the same step that finds the queue empty (no event strands). */
  private async drain(): Promise<void> {
    try {
      await this.sendQueued();
    } finally {
      this.sending = false;
    }
    // An event queued between the last send and here would have found `sending` set.
    if (this.queue.length > 0 && !this.retryTimer && !this.closed) this.kick();
  }

  private async sendQueued(): Promise<void> {
    const prefix = this.options.prefix ?? DEFAULT_PREFIX;
    const timeoutMs = this.options.emitTimeoutMilliseconds ?? 5_000;
    while (this.queue.length > 0 && !this.closed) {
      const event = this.queue[0]!;
      try {
        await firstValueFrom(this.client.emit(`${prefix}.${event.type}`, event).pipe(timeout(timeoutMs)), {
          defaultValue: undefined,
        });
      } catch (error) {
        if (this.closed) return;
        this.failures++;
        const delay = backoffMs(this.failures - 1, 250, MAX_RETRY_DELAY_MS);
        this.outage.failed(error, `${this.queue.length} event(s) wait, emitting is retried with backoff`);
        this.logger.debug(`cannot emit events (${describeError(error)}); retrying in ${delay} ms`);
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined;
          this.kick();
        }, delay);
        this.retryTimer.unref();
        return;
      }
      if (this.queue[0] === event) this.queue.shift();
      this.sent++;
      if (this.failures > 0 || this.droppedSinceReported > 0) {
        const dropped =
          this.droppedSinceReported > 0
            ? `${this.droppedSinceReported} event(s) were dropped meanwhile (maxBufferedEvents)`
            : '';
        if (this.outage.away) this.outage.recovered(`emitting events again${dropped ? `; ${dropped}` : ''}`);
        else this.logger.log(`emitting events again; ${dropped}`);
        this.failures = 0;
        this.droppedSinceReported = 0;
      }
    }
  }

  /**
   * Before the clients close (Nest closes them in onApplicationShutdown), after the jobs have drained: what the
   * last firings told is sent, for up to the emit timeout.
   */
  async beforeApplicationShutdown(): Promise<void> {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.kick();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.draining,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, this.options.emitTimeoutMilliseconds ?? 5_000))),
    ]);
    clearTimeout(timer);
  }

  onApplicationShutdown(): void {
    this.closed = true;
    this.subscription?.unsubscribe();
    clearTimeout(this.retryTimer);
    if (this.queue.length > 0) this.logger.warn(`${this.queue.length} event(s) not emitted at shutdown`);
  }
}

/**
 * The provider that emits the jobs' events through a `ClientProxy`, for the `providers` of the module that imports
 * ElasticJobModule and registers the client: `transportEvents({ client: 'EVENTS' })`. Options are checked here.
 * @publicApi
 */
export function transportEvents(options: TransportEventsOptions): FactoryProvider<ElasticJobTransportEvents> {
  const fail = (field: string, detail: string): never => {
    throw new InvalidOperationError('transportEvents', field, detail);
  };
  if (!options || options.client === undefined || options.client === null)
    fail('client', 'is required: the ClientProxy token (the name given to ClientsModule.register())');
  if (options.prefix !== undefined && (typeof options.prefix !== 'string' || !/^\S+$/.test(options.prefix)))
    fail('prefix', `must be a non-empty word, got ${JSON.stringify(options.prefix)}`);
  if (options.types !== undefined && options.types.length === 0)
    fail('types', 'is empty: nothing would be sent (omit it to send every type)');
  for (const type of options.types ?? [])
    if (!ELASTIC_JOB_EVENT_TYPES.includes(type)) fail('types', `'${type}' is not an event type`);
  if (
    options.maxBufferedEvents !== undefined &&
    !(Number.isInteger(options.maxBufferedEvents) && options.maxBufferedEvents > 0)
  )
    fail('maxBufferedEvents', `must be an integer > 0, got ${JSON.stringify(options.maxBufferedEvents)}`);
  const problem = positiveTimer(options.emitTimeoutMilliseconds);
  if (problem) fail('emitTimeoutMilliseconds', problem);
  return {
    provide: ElasticJobTransportEvents,
    useFactory: (jobs: ElasticJobRegistry, client: ClientProxy) => {
      if (typeof (client as Partial<ClientProxy> | undefined)?.emit !== 'function')
        fail('client', `${String(options.client)} is not a ClientProxy (no emit()): register it with ClientsModule`);
      return new ElasticJobTransportEvents(jobs, client, options);
    },
    inject: [ElasticJobRegistry, options.client],
  };
}
