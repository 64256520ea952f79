import { Injectable } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ShardedJob,
  type JobErrorHandler,
  type JobInstance,
  type JobShardingStrategy,
  type ShardingContext,
} from '../../lib/index.js';
import { appOptions, bootApp } from '../support/app.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace } from '../support/zk.js';

/** Custom strategies and error handlers are found by their type name, which is all the config node holds. */

afterEach(async () => {
  await releaseAll();
});

let strategyCalls = 0;
const reversed: JobShardingStrategy = {
  type: 'REVERSED',
  sharding(instances: readonly JobInstance[], _jobName: string, total: number): Map<string, number[]> {
    strategyCalls++;
    const result = new Map<string, number[]>();
    if (instances.length > 0)
      result.set(
        instances[0]!.jobInstanceId,
        Array.from({ length: total }, (_, i) => total - 1 - i),
      );
    return result;
  },
};
const handled: Array<{ item: number; message: string }> = [];
const recording: JobErrorHandler = {
  type: 'RECORDING',
  handleException: (_jobName, error, context) =>
    void handled.push({ item: context.shardingItem, message: (error as Error).message }),
};
const parameters: string[] = [];

@Injectable()
class PluggedJob {
  @ShardedJob({
    jobName: 'plugged',
    cron: '* * * * * *',
    shardingTotalCount: 2,
    jobShardingStrategyType: reversed,
    jobErrorHandlerType: recording,
  })
  run(context: ShardingContext): void {
    parameters.push(context.jobParameter);
    throw new Error(`item ${context.shardingItem} failed`);
  }
}

describe('plugins by type name', () => {
  it('a custom strategy and error handler are stored by name, used by name, and a config node naming them is adopted', async () => {
    const namespace = uniqueNamespace('plugins');
    strategyCalls = 0;
    handled.length = 0;
    parameters.length = 0;
    const zk = await observer(namespace);
    const app = await bootApp(appOptions(namespace), [PluggedJob]);
    hold(() => app.close());
    await eventually(
      () => handled.length,
      (n) => n >= 2,
      10_000,
      'both items failing into the custom handler',
    );
    expect(strategyCalls).toBeGreaterThanOrEqual(1);
    expect(new Set(handled.map((h) => h.item))).toEqual(new Set([0, 1]));
    const stored = (await zk.getData('/plugged/config'))!.data.toString();
    expect(stored).toContain('jobShardingStrategyType: REVERSED');
    expect(stored).toContain('jobErrorHandlerType: RECORDING');
    // An operator's change to another field keeps the custom names: the node is valid for this job, and adopted.
    await zk.setData('/plugged/config', Buffer.from(stored.replace("jobParameter: ''", 'jobParameter: changed')));
    await eventually(
      () => parameters.at(-1),
      (value) => value === 'changed',
      10_000,
      'the changed job parameter',
    );
  });
});
