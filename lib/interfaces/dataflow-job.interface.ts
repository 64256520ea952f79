import type { ShardedJobOptions } from './sharded-job-options.interface.js';
import type { ShardingContext } from './sharding-context.interface.js';

/**
 * ElasticJob's DataflowJob: a provider decorated with `@DataflowJob()` fetches data for an item and processes it
 * (docs/guide/dataflow-one-off-runtime.md, "Dataflow jobs").
 */
export interface DataflowJobHandler<T> {
  /** The data of this item to process now; empty (or nothing) when there is none. */
  fetchData(context: ShardingContext): T[] | undefined | Promise<T[] | undefined>;
  processData(context: ShardingContext, data: T[]): unknown;
}

export interface DataflowJobOptions extends ShardedJobOptions {
  /**
   * ElasticJob's `streaming.process`: fetch and process again while data comes back, the job needs no resharding
   * and the item's signal has not aborted. Default false: one fetch and, with data, one process per item per firing.
   */
  streaming?: boolean;
}
