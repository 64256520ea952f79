import type { LoggerService } from '@nestjs/common';

/**
 * What an item may report as its progress (`context.reportProgress()`): a number (a percentage, a count), or a small
 * object of numbers, strings and booleans (at most 16 fields, 1 KB as JSON). @publicApi
 */
export type ItemProgress = number | Readonly<Record<string, number | string | boolean>>;

/** What a `@ShardedJob()` method receives, once per sharding item per firing. @publicApi */
export interface ShardingContext {
  jobName: string;
  /** ElasticJob's task id: `{jobName}@-@{items}@-@READY@-@{instanceId}` (deterministic, not unique per firing). */
  taskId: string;
  shardingTotalCount: number;
  jobParameter: string;
  shardingItem: number;
  /** The item's entry of `shardingItemParameters`, or undefined when it has none. */
  shardingParameter: string | undefined;
  /**
   * Aborts when this instance may no longer own the item: the ZooKeeper session was lost (another instance may
   * take the item over) or shutdown waited `shutdownTimeoutMilliseconds`. Long handlers should watch it.
   */
  signal: AbortSignal;
  /**
   * Which run of the item this is in its firing: 1, then 2, 3... when the job retries failed items
   * (`@ShardedJob({ retry })`, docs/guide/item-policies.md).
   */
  attempt: number;
  /**
   * The item's logger (Nest's LoggerService): its lines go to the app's logger, with the job's name as context, and are
   * kept with this execution, bounded (docs/guide/item-policies.md, "Item logs"), for the operator API and the console.
   */
  logger: LoggerService;
  /**
   * Reports the item's progress: the latest value is what the operator API's `getShardingInfo()`, the CLI's `sharding`
   * and the console show for the running item, asked of this instance when they look (nothing is written to ZooKeeper
   * here). A value that is not an ItemProgress, or too large, throws a TypeError naming the limit.
   */
  reportProgress(value: ItemProgress): void;
}
