import { Injectable } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DataflowJob,
  ElasticJobRegistry,
  JobConfigurationError,
  type DataflowJobHandler,
  type ShardingContext,
} from '../../lib/index.js';
import { appOptions, bootApp } from '../support/app.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace } from '../support/zk.js';

/**
 * Dataflow jobs (docs/guide/dataflow-one-off-runtime.md, "Dataflow jobs"), ElasticJob's one-shot and streaming modes,
 * on the real ZooKeeper.
 */

afterEach(async () => {
  await releaseAll();
});

const YEARLY = '0 0 0 1 1 *';
/** Records waiting per item, taken two at a time. */
const queues = new Map<number, number[]>();
const processed: Array<{ item: number; records: number[] }> = [];

@Injectable()
@DataflowJob({ jobName: 'orders', cron: YEARLY, shardingTotalCount: 2 })
class OrdersJob implements DataflowJobHandler<number> {
  fetchData(context: ShardingContext): number[] {
    return (queues.get(context.shardingItem) ?? []).splice(0, 2);
  }

  processData(context: ShardingContext, records: number[]): void {
    processed.push({ item: context.shardingItem, records });
  }
}

let streamed: number[][] = [];
const streamQueue: number[] = [];

@Injectable()
@DataflowJob({ jobName: 'stream', cron: YEARLY, shardingTotalCount: 1, streaming: true })
class StreamJob implements DataflowJobHandler<number> {
  fetchData(): number[] {
    return streamQueue.splice(0, 2);
  }

  processData(_context: ShardingContext, records: number[]): void {
    streamed.push(records);
  }
}

let endlessBatches = 0;

@Injectable()
@DataflowJob({ jobName: 'endless', cron: YEARLY, shardingTotalCount: 1, streaming: true })
class EndlessJob implements DataflowJobHandler<string> {
  async fetchData(): Promise<string[]> {
    await new Promise((resolve) => setTimeout(resolve, 20));
    return ['always more'];
  }

  processData(): void {
    endlessBatches++;
  }
}

describe('dataflow jobs', () => {
  it('one-shot: one fetch and one process per item per firing', async () => {
    queues.set(0, [1, 2, 3, 4, 5]);
    queues.set(1, [6, 7]);
    processed.length = 0;
    const app = await bootApp(appOptions(uniqueNamespace('dataflow')), [OrdersJob]);
    hold(() => app.close());
    const registry = app.get(ElasticJobRegistry);
    await registry.trigger('orders');
    await eventually(
      () => processed.length,
      (n) => n === 2,
      10_000,
      'one batch per item',
    );
    expect(processed.sort((a, b) => a.item - b.item)).toEqual([
      { item: 0, records: [1, 2] },
      { item: 1, records: [6, 7] },
    ]);
    await eventually(
      () => registry.getJobStatus('orders').firing,
      (firing) => !firing,
      10_000,
      'the firing over',
    );
    await registry.trigger('orders'); // item 1 has nothing left: no process call for it
    await eventually(
      () => processed.length,
      (n) => n === 3,
      10_000,
      'the second firing',
    );
    expect(processed[2]).toEqual({ item: 0, records: [3, 4] });
    // runJob(): one fetch and one process, without ZooKeeper's firing.
    await expect(registry.runJob('orders', { shardingItem: 0 })).resolves.toEqual([5]);
  });

  it('streaming: fetches and processes until no data comes back', async () => {
    streamed = [];
    streamQueue.splice(0, streamQueue.length, 1, 2, 3, 4, 5, 6, 7);
    const app = await bootApp(appOptions(uniqueNamespace('dataflow-stream')), [StreamJob]);
    hold(() => app.close());
    const registry = app.get(ElasticJobRegistry);
    const completed: unknown[] = [];
    const subscription = registry.events$.subscribe((event) => {
      if (event.type === 'item.completed') completed.push(event);
    });
    hold(() => subscription.unsubscribe());
    await registry.trigger('stream');
    await eventually(
      () => completed.length,
      (n) => n === 1,
      10_000,
      'the item execution',
    );
    expect(streamed).toEqual([[1, 2], [3, 4], [5, 6], [7]]); // one item execution, four rounds
  });

  it('streaming stops when the job needs resharding (another instance may own the item next)', async () => {
    endlessBatches = 0;
    const namespace = uniqueNamespace('dataflow-reshard');
    const app = await bootApp(appOptions(namespace), [EndlessJob]);
    hold(() => app.close());
    const registry = app.get(ElasticJobRegistry);
    await registry.trigger('endless');
    await eventually(
      () => endlessBatches,
      (n) => n >= 5,
      10_000,
      'streaming under way',
    );
    expect(registry.getJobStatus('endless').runningItems).toEqual([0]);
    const zk = await observer(namespace);
    await zk.create('/endless/leader/sharding/necessary', Buffer.from('')); // as a leader flags a membership change
    await eventually(
      () => registry.getJobStatus('endless').runningItems,
      (items) => items.length === 0,
      10_000,
      'the stream stopped',
    );
    const stoppedAt = endlessBatches;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(endlessBatches).toBe(stoppedAt);
  });

  it('refuses a @DataflowJob() provider without processData, naming the job and the method', async () => {
    @Injectable()
    @DataflowJob({ jobName: 'half', cron: YEARLY, shardingTotalCount: 1 })
    class HalfJob {
      fetchData(): number[] {
        return [];
      }
    }
    await expect(bootApp(appOptions(uniqueNamespace('dataflow-bad')), [HalfJob])).rejects.toThrow(
      JobConfigurationError,
    );
    await expect(bootApp(appOptions(uniqueNamespace('dataflow-bad')), [HalfJob])).rejects.toThrow(
      /Job 'half'.*processData.*@DataflowJob\(\) on HalfJob needs a processData\(\) method/,
    );
  });
});
