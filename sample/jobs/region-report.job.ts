import { Injectable, Logger } from '@nestjs/common';
import { ShardedJob, type ShardingContext } from '../../lib/index.js';

/** One item per region, each with its region as the item parameter. */
@Injectable()
export class RegionReportJob {
  private readonly logger = new Logger('region-report');

  @ShardedJob({
    jobName: 'region-report',
    cron: '*/2 * * * * *',
    shardingTotalCount: 4,
    shardingItemParameters: '0=eu-west,1=eu-central,2=us-east,3=ap-south',
    description: 'Builds the report of one region per sharding item',
    overwrite: true,
  })
  async build(context: ShardingContext): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (context.signal.aborted) return;
    this.logger.log(
      `item ${context.shardingItem} (${context.shardingParameter}) on ${process.env.INSTANCE_NAME ?? process.pid}`,
    );
  }
}
