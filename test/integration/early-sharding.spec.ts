import { Injectable } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { ElasticJobRegistry, ShardedJob } from '../../lib/index.js';
import { appOptions, bootApp } from '../support/app.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace } from '../support/zk.js';

/**
 * Issue 43, "the first firing like the others": the leader shards as soon as it is registered with the resharding
 * flag set, not at the first firing (ElasticJob shards lazily there), so the first instant finds its items assigned.
 */

afterEach(async () => {
  await releaseAll();
});

let runs = 0;
@Injectable()
class YearlyJob {
  // Fires on January 1st only: no firing happens during the test, so whatever is sharded was sharded before one.
  @ShardedJob({ jobName: 'yearly', cron: '0 0 0 1 1 ?', shardingTotalCount: 3 })
  run(): void {
    runs++;
  }
}

describe('sharding at start-up', () => {
  it('the leader writes the sharding nodes after start-up, before the first instant', async () => {
    const namespace = uniqueNamespace('early');
    runs = 0;
    const zk = await observer(namespace);
    const app = await bootApp(appOptions(namespace), [YearlyJob]);
    hold(() => app.close());
    const status = () => app.get(ElasticJobRegistry).getJobStatus('yearly');
    expect(status().isLeader).toBe(true);
    const owners = async (): Promise<Array<string | undefined>> =>
      Promise.all(
        [0, 1, 2].map(async (item) => (await zk.getData(`/yearly/sharding/${item}/instance`))?.data.toString()),
      );
    await eventually(
      owners,
      (names) => names.every((name) => name === status().instanceId),
      20_000,
      'the sharding nodes, written before any firing',
    );
    expect(await zk.exists('/yearly/leader/sharding/necessary')).toBeUndefined();
    expect(await zk.exists('/yearly/leader/sharding/processing')).toBeUndefined();
    expect(status().shardingItems).toEqual([0, 1, 2]);
    expect(runs).toBe(0);
  });
});
