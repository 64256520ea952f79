import { Injectable, Logger } from '@nestjs/common';
import { DataflowJob, type DataflowJobHandler, type ShardingContext } from '../../lib/index.js';

/**
 * A dataflow job: every 4 seconds each of two items drains its share of an outbox (here an in-memory one, refilled
 * each time), streaming batch after batch until nothing is left or a resharding moves the item.
 */
@Injectable()
@DataflowJob({
  jobName: 'outbox-relay',
  cron: '*/4 * * * * *',
  shardingTotalCount: 2,
  streaming: true,
  overwrite: true,
})
export class OutboxRelayJob implements DataflowJobHandler<string> {
  private readonly logger = new Logger('outbox-relay');
  private readonly outbox = new Map<number, string[]>();

  fetchData(context: ShardingContext): string[] {
    if (!this.outbox.has(context.shardingItem)) {
      this.outbox.set(
        context.shardingItem,
        Array.from({ length: 5 }, (_, index) => `message-${context.shardingItem}-${index}`),
      );
    }
    const batch = this.outbox.get(context.shardingItem)!.splice(0, 2);
    if (batch.length === 0) this.outbox.delete(context.shardingItem); // drained: refilled at the next firing
    return batch;
  }

  processData(context: ShardingContext, messages: string[]): void {
    this.logger.log(
      `item ${context.shardingItem} relayed ${messages.join(', ')} on ${process.env.INSTANCE_NAME ?? process.pid}`,
    );
  }
}
