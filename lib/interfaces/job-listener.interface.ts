import type { ExecutionSource } from '../events/elastic-job-event.types.js';

/**
 * What a job listener is told about a run of items on this instance: ElasticJob's `ShardingContexts`, with the
 * items and why they run.
 */
export interface ShardingContexts {
  taskId: string;
  jobName: string;
  shardingTotalCount: number;
  jobParameter: string;
  /** The items of this run on this instance, each with its parameter ('' when it has none). */
  shardingItemParameters: Record<number, string>;
  /** The same items, ascending (empty when none of the job's items is this instance's). */
  shardingItems: number[];
  source: ExecutionSource;
}

/**
 * ElasticJob's `AbstractDistributeOnceElasticJobListener`: called once per firing across the whole cluster, by the
 * instance that is last to start (or complete) its items, through the job's `guarantee/started` and
 * `guarantee/completed` nodes (the same nodes as Java ElasticJob instances). Each instance waits for that, at most
 * the listener's timeout.
 */
export interface DistributeOnceElasticJobListener {
  beforeJobExecutedAtLastStarted?(shardingContexts: ShardingContexts): void | Promise<void>;
  afterJobExecutedAtLastCompleted?(shardingContexts: ShardingContexts): void | Promise<void>;
}

export interface ElasticJobListenerOptions {
  /** The jobs it listens to (by name); every job of the app when omitted. */
  jobs?: readonly string[];
  /** Lower runs first (ElasticJob's `order()`); default `Number.MAX_SAFE_INTEGER`, then by class name. */
  order?: number;
  /** Distribute-once only: how long an instance waits for every item to start. Default 60 000. */
  startedTimeoutMilliseconds?: number;
  /** Distribute-once only: how long an instance waits for every item to complete. Default 60 000. */
  completedTimeoutMilliseconds?: number;
}
