import { SetMetadata } from '@nestjs/common';
import { DATAFLOW_JOB_METADATA } from './metadata-keys.js';
import type { DataflowJobOptions } from '../interfaces/dataflow-job.interface.js';

/**
 * Makes a provider a dataflow job (ElasticJob's DataflowJob): it implements `fetchData(context)` and
 * `processData(context, data)`, called per sharding item per firing (docs/guide/dataflow-one-off-runtime.md, "Dataflow
 * jobs"). Options as `@ShardedJob()`'s, plus `streaming`. Validated at bootstrap.
 * @publicApi
 */
export function DataflowJob(options: DataflowJobOptions): ClassDecorator {
  return SetMetadata(DATAFLOW_JOB_METADATA, options);
}
