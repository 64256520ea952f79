import { Injectable, Logger } from '@nestjs/common';
import { Observable, Subject } from 'rxjs';
import { describeError } from '../errors/elastic-job.errors.js';
import type { ElasticJobEvent, ElasticJobEventType } from './elastic-job-event.types.js';

/** A subscriber the library calls itself (an `@OnElasticJobEvent()` method): isolated, its failures logged. */
interface Handler {
  types: ReadonlySet<ElasticJobEventType> | undefined;
  jobs: ReadonlySet<string> | undefined;
  call: (event: ElasticJobEvent) => unknown;
  name: string;
}

/**
 * Where every job of this app publishes its events (one per module). Publishing only queues: the events of a
 * burst are delivered together a microtask later, after the publishing code (a firing) has moved on, so a
 * subscriber never delays a firing. Each `@OnElasticJobEvent()` method is called on its own: one that throws or
 * rejects is logged, the others still hear the event. Subscribers of `events$` follow rxjs's rules (an error
 * thrown in `next` goes to rxjs's unhandled-error reporting), so keep them from throwing.
 */
@Injectable()
export class ElasticJobEventBus {
  private readonly subject = new Subject<ElasticJobEvent>();
  private readonly handlers = new Set<Handler>();
  private queue: ElasticJobEvent[] = [];

  /** Every event of every job of this app, as it happens (no replay). */
  readonly events$: Observable<ElasticJobEvent> = this.subject.asObservable();

  /** Whether anybody listens: publishers may skip building an event nobody hears. */
  get observed(): boolean {
    return this.handlers.size > 0 || this.subject.observed;
  }

  /** Whether anybody listens to events of this type (of some job): publishers skip building the others. */
  observes(type: ElasticJobEventType): boolean {
    if (this.subject.observed) return true;
    for (const handler of this.handlers) if (!handler.types || handler.types.has(type)) return true;
    return false;
  }

  /** Calls `call` with the events of the given types (all when undefined) of the given jobs (all when undefined). */
  on(
    name: string,
    call: (event: ElasticJobEvent) => unknown,
    filter: { types?: readonly ElasticJobEventType[]; jobs?: readonly string[] } = {},
  ): () => void {
    const handler: Handler = {
      name,
      call,
      types: filter.types && new Set(filter.types),
      jobs: filter.jobs && new Set(filter.jobs),
    };
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  publish(event: ElasticJobEvent): void {
    if (!this.observed) return;
    this.queue.push(event);
    if (this.queue.length === 1) queueMicrotask(() => this.deliver());
  }

  private deliver(): void {
    const events = this.queue;
    this.queue = [];
    for (const event of events) {
      for (const handler of this.handlers) {
        if (handler.types && !handler.types.has(event.type)) continue;
        if (handler.jobs && !handler.jobs.has(event.jobName)) continue;
        try {
          const result = handler.call(event);
          if (result instanceof Promise) result.catch((error: unknown) => this.handlerFailed(handler, event, error));
        } catch (error) {
          this.handlerFailed(handler, event, error);
        }
      }
      this.subject.next(event);
    }
  }

  private handlerFailed(handler: Handler, event: ElasticJobEvent, error: unknown): void {
    new Logger(`ElasticJob:${event.jobName}`).warn(
      `${handler.name} failed on a '${event.type}' event: ${describeError(error)}`,
    );
  }

  /** Completes `events$` (the module is closing). */
  close(): void {
    this.subject.complete();
    this.handlers.clear();
  }
}
