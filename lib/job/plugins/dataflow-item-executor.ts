import type { DataflowJobHandler } from '../../interfaces/dataflow-job.interface.js';
import type { ShardingContext } from '../../interfaces/sharding-context.interface.js';
import type { JobItemExecutor } from './item-executor.js';

/**
 * ElasticJob's DataflowJobExecutor (docs/reference/elasticjob.md §5.9), one item: fetch, and with data process. In
 * streaming mode it goes on (fetch → process) while data comes back, the job needs no resharding (another instance
 * may own the item next) and the item's signal has not aborted. Resolves with the number of records processed.
 */
export class DataflowItemExecutor implements JobItemExecutor {
  readonly type = 'DATAFLOW';

  constructor(
    private readonly job: DataflowJobHandler<unknown>,
    private readonly streaming: boolean,
    private readonly needsResharding: () => boolean,
  ) {}

  async execute(context: ShardingContext): Promise<number> {
    let processed = 0;
    let data = await this.job.fetchData(context);
    while (data && data.length > 0) {
      await this.job.processData(context, data);
      processed += data.length;
      if (!this.streaming || context.signal.aborted || this.needsResharding()) break;
      data = await this.job.fetchData(context);
    }
    return processed;
  }
}
