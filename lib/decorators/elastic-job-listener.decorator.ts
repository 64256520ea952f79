import { SetMetadata } from '@nestjs/common';
import { JOB_LISTENER_METADATA } from './metadata-keys.js';
import type { ElasticJobListenerOptions, ShardingContexts } from '../interfaces/job-listener.interface.js';

/**
 * ElasticJob's `ElasticJobListener`: called on every instance around each run of the job's items there, awaited
 * (the items start after `beforeJobExecuted` resolves). Implement it on a provider decorated with
 * `@ElasticJobListener()` (the decorator below, same name); what it throws is logged and the firing goes on.
 */
export interface ElasticJobListener {
  beforeJobExecuted?(shardingContexts: ShardingContexts): void | Promise<void>;
  afterJobExecuted?(shardingContexts: ShardingContexts): void | Promise<void>;
}

/**
 * Makes a provider a job listener (ElasticJob's `ElasticJobListener`, or its distribute-once kind when it has
 * `beforeJobExecutedAtLastStarted` / `afterJobExecutedAtLastCompleted`). It may inject anything.
 * docs/guide/events-and-listeners.md, "Job listeners".
 * @publicApi
 */
export function ElasticJobListener(options: ElasticJobListenerOptions = {}): ClassDecorator {
  return SetMetadata(JOB_LISTENER_METADATA, options);
}
