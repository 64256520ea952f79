import { SetMetadata } from '@nestjs/common';
import { SHARDED_JOB_METADATA } from './metadata-keys.js';
import type { ShardedJobOptions } from '../interfaces/sharded-job-options.interface.js';

/**
 * Marks a provider method as a sharded job. The method is called once per sharding item this instance owns, per
 * firing, items concurrently, with a `ShardingContext`. Options are validated at bootstrap.
 * @publicApi
 */
export function ShardedJob(options: ShardedJobOptions): MethodDecorator {
  return SetMetadata(SHARDED_JOB_METADATA, options);
}
