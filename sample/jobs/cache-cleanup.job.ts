import { Injectable, Logger } from '@nestjs/common';
import { ShardedJob, type ShardingContext } from '../../lib/index.js';

/** Six cache partitions cleaned every 3 seconds, spread with ElasticJob's ROUND_ROBIN strategy. */
@Injectable()
export class CacheCleanupJob {
  private readonly logger = new Logger('cache-cleanup');

  @ShardedJob({
    jobName: 'cache-cleanup',
    cron: '*/3 * * * * *',
    shardingTotalCount: 6,
    jobShardingStrategyType: 'ROUND_ROBIN',
    overwrite: true,
  })
  clean(context: ShardingContext): void {
    this.logger.log(
      `item ${context.shardingItem} (partition ${context.shardingItem} of ${context.shardingTotalCount}) on ${process.env.INSTANCE_NAME ?? process.pid}`,
    );
  }
}
