import type { ShardingContext } from '../../interfaces/sharding-context.interface.js';

/**
 * The item's context as ElasticJob's typed executors hand it on (the HTTP header `shardingContext`, the SCRIPT's last
 * argument): its ShardingContext's fields as JSON, the parameter `null` when the item has none.
 */
export function shardingContextJson(context: ShardingContext): string {
  return JSON.stringify({
    jobName: context.jobName,
    taskId: context.taskId,
    shardingTotalCount: context.shardingTotalCount,
    jobParameter: context.jobParameter,
    shardingItem: context.shardingItem,
    shardingParameter: context.shardingParameter ?? null,
  });
}
