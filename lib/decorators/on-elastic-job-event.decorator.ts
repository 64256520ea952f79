import { SetMetadata } from '@nestjs/common';
import { EVENT_SUBSCRIBER_METADATA } from './metadata-keys.js';
import type { ElasticJobEventType } from '../events/elastic-job-event.types.js';

/** What `@OnElasticJobEvent()` stores on the method. */
export interface EventSubscriberMetadata {
  /** Undefined: every type. */
  types?: readonly ElasticJobEventType[];
  /** Undefined: every job. */
  jobs?: readonly string[];
}

/**
 * Calls the decorated provider method with the events of the given types (`'item.completed'`, `['leadership.gained',
 * 'leadership.lost']`, or every event with `'*'`), of every job or of `{ jobs: [...] }`. Called after the firing has
 * moved on, never awaited by it; an error it throws (or a promise it rejects) is logged and hurts nothing else.
 * @publicApi
 */
export function OnElasticJobEvent(
  types: ElasticJobEventType | readonly ElasticJobEventType[] | '*',
  options: { jobs?: readonly string[] } = {},
): MethodDecorator {
  const metadata: EventSubscriberMetadata = {
    ...(types === '*' ? {} : { types: typeof types === 'string' ? [types] : types }),
    ...(options.jobs ? { jobs: options.jobs } : {}),
  };
  return SetMetadata(EVENT_SUBSCRIBER_METADATA, metadata);
}
