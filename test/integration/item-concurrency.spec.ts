import { Injectable } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { ElasticJobRegistry, JobConfigurationError, ShardedJob } from '../../lib/index.js';
import { appOptions, bootApp } from '../support/app.js';
import { hold, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace } from '../support/zk.js';

/** `maxConcurrentItems`: a cap on the items of a job running at once in this process (ElasticJob's pool size). */

afterEach(async () => {
  await releaseAll();
});

let inFlight = 0;
let maxInFlight = 0;
const done: number[] = [];

@Injectable()
class HeavyJob {
  @ShardedJob({ jobName: 'heavy', cron: '0 0 0 1 1 *', shardingTotalCount: 8, maxConcurrentItems: 2 })
  async run(context: { shardingItem: number }): Promise<void> {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((resolve) => setTimeout(resolve, 60));
    inFlight--;
    done.push(context.shardingItem);
  }
}

describe('item concurrency', () => {
  it('runs at most maxConcurrentItems items at once; the others of the firing wait their turn', async () => {
    const app = await bootApp(appOptions(uniqueNamespace('concurrency')), [HeavyJob]);
    hold(() => app.close());
    await app.get(ElasticJobRegistry).trigger('heavy');
    await eventually(
      () => done.length,
      (n) => n === 8,
      15_000,
      'all eight items',
    );
    expect(maxInFlight).toBe(2);
    expect(done.sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('refuses a cap that is not an integer >= 1, naming the job and the field', async () => {
    @Injectable()
    class BadCap {
      @ShardedJob({ jobName: 'bad-cap', cron: '0 0 0 1 1 *', shardingTotalCount: 2, maxConcurrentItems: 0 })
      run(): void {}
    }
    const booting = bootApp(appOptions(uniqueNamespace('bad-cap')), [BadCap]);
    await expect(booting).rejects.toThrow(JobConfigurationError);
    await expect(bootApp(appOptions(uniqueNamespace('bad-cap')), [BadCap])).rejects.toThrow(
      /Job 'bad-cap'.*maxConcurrentItems.*must be an integer >= 1/,
    );
  });
});
