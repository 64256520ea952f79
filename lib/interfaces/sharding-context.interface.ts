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
}
