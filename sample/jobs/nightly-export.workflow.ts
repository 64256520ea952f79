import { Injectable, Logger } from '@nestjs/common';
import { ShardedJob, type ShardingContext, type WorkflowOptions } from '../../lib/index.js';

/**
 * A workflow (docs/guide/workflows.md): `export-extract` on two items, then `export-transform` on four once every item
 * of the extract succeeded on whichever instance ran it, then `export-load`. Its steps are one-off jobs: they fire only
 * within a run. It runs at 02:00, or when triggered (the console's "Trigger run", or
 * `npx nestjs-elastic-job workflow-trigger nightly-export`).
 */
export const NIGHTLY_EXPORT: WorkflowOptions = {
  name: 'nightly-export',
  cron: '0 0 2 * * *',
  steps: { 'export-extract': [], 'export-transform': ['export-extract'], 'export-load': ['export-transform'] },
};

@Injectable()
export class NightlyExportJobs {
  private readonly logger = new Logger('nightly-export');

  @ShardedJob({ jobName: 'export-extract', oneOff: true, shardingTotalCount: 2, failover: true, overwrite: true })
  extract(context: ShardingContext): void {
    this.step('extract', context);
  }

  @ShardedJob({ jobName: 'export-transform', oneOff: true, shardingTotalCount: 4, failover: true, overwrite: true })
  transform(context: ShardingContext): void {
    this.step('transform', context);
  }

  @ShardedJob({ jobName: 'export-load', oneOff: true, shardingTotalCount: 1, failover: true, overwrite: true })
  load(context: ShardingContext): void {
    this.step('load', context);
  }

  private step(name: string, context: ShardingContext): void {
    this.logger.log(`${name} item ${context.shardingItem} on ${process.env.INSTANCE_NAME ?? process.pid}`);
  }
}
