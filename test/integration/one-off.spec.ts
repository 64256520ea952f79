import { Injectable } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ElasticJobOperator,
  ElasticJobRegistry,
  JobConfigurationError,
  ShardedJob,
  type ShardingContext,
} from '../../lib/index.js';
import { appOptions, bootApp } from '../support/app.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace } from '../support/zk.js';

/** One-off jobs (ElasticJob's OneOffJobBootstrap): no cron, run across the cluster only when triggered. */

afterEach(async () => {
  await releaseAll();
});

const runs: Array<{ trigger: number; item: number; instance: string; parameter: string }> = [];
let currentTrigger = 0;

@Injectable()
class ReindexJob {
  @ShardedJob({ jobName: 'reindex', oneOff: true, shardingTotalCount: 6, jobParameter: 'incremental' })
  run(context: ShardingContext): void {
    runs.push({
      trigger: currentTrigger,
      item: context.shardingItem,
      instance: context.taskId.split('@-@')[3]!,
      parameter: context.jobParameter,
    });
  }
}

describe('one-off jobs', () => {
  it('run exactly their items once per trigger across three instances, and never by themselves', async () => {
    const namespace = uniqueNamespace('one-off');
    const apps: TestingModule[] = [];
    for (const ip of ['127.0.0.2', '127.0.0.3', '127.0.0.4']) {
      const app = await bootApp(appOptions(namespace, { instance: { ip } }), [ReindexJob]);
      hold(() => app.close());
      apps.push(app);
    }
    const registry = apps[0]!.get(ElasticJobRegistry);
    expect(registry.getJobStatus('reindex').nextFireTime).toBeUndefined();
    const zk = await observer(namespace);
    const yaml = (await zk.getData('/reindex/config'))!.data.toString();
    expect(yaml).not.toMatch(/^cron:/m); // as ElasticJob's OneOffJobBootstrap writes it

    for (const trigger of [1, 2]) {
      currentTrigger = trigger;
      await eventually(
        () => apps.every((app) => !app.get(ElasticJobRegistry).getJobStatus('reindex').firing),
        (idle) => idle,
        10_000,
        'no firing under way',
      );
      expect(await registry.trigger('reindex')).toBe(3);
      await eventually(
        () => runs.filter((run) => run.trigger === trigger).length,
        (n) => n >= 6,
        15_000,
        `the items of trigger ${trigger}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 1500)); // nothing more comes
      const items = runs.filter((run) => run.trigger === trigger).map((run) => run.item);
      expect(items.sort()).toEqual([0, 1, 2, 3, 4, 5]);
    }
    // Sharded over the three instances by the time of the second trigger.
    expect(new Set(runs.filter((run) => run.trigger === 2).map((run) => run.instance)).size).toBe(3);
    expect(runs.every((run) => run.parameter === 'incremental')).toBe(true);

    // A trigger may carry a job parameter for that run, on every instance; the next one runs with the job's own.
    currentTrigger = 3;
    expect(await registry.trigger('reindex', { jobParameter: 'full-rebuild' })).toBe(3);
    await eventually(
      () => runs.filter((run) => run.trigger === 3).length,
      (n) => n >= 6,
      15_000,
      'trigger 3',
    );
    expect(runs.filter((run) => run.trigger === 3).every((run) => run.parameter === 'full-rebuild')).toBe(true);
    await eventually(
      () => apps.every((app) => !app.get(ElasticJobRegistry).getJobStatus('reindex').firing),
      (idle) => idle,
      10_000,
      'no firing under way',
    );
    currentTrigger = 4;
    await registry.trigger('reindex');
    await eventually(
      () => runs.filter((run) => run.trigger === 4).length,
      (n) => n >= 6,
      15_000,
      'trigger 4',
    );
    expect(runs.filter((run) => run.trigger === 4).every((run) => run.parameter === 'incremental')).toBe(true);

    // The operator API (and the CLI, the message pattern, which use it) carries one too.
    await eventually(
      () => apps.every((app) => !app.get(ElasticJobRegistry).getJobStatus('reindex').firing),
      (idle) => idle,
      10_000,
      'no firing under way',
    );
    currentTrigger = 5;
    expect(await apps[1]!.get(ElasticJobOperator).trigger('reindex', { jobParameter: 'via-operator' })).toHaveLength(3);
    await eventually(
      () => runs.filter((run) => run.trigger === 5).length,
      (n) => n >= 6,
      15_000,
      'trigger 5',
    );
    expect(runs.filter((run) => run.trigger === 5).every((run) => run.parameter === 'via-operator')).toBe(true);
  });

  it('refuses a cron on a one-off job, and a job with neither', async () => {
    @Injectable()
    class Both {
      @ShardedJob({ jobName: 'both', oneOff: true, cron: '* * * * * *', shardingTotalCount: 1 })
      run(): void {}
    }
    @Injectable()
    class Neither {
      @ShardedJob({ jobName: 'neither', shardingTotalCount: 1 })
      run(): void {}
    }
    await expect(bootApp(appOptions(uniqueNamespace('one-off-bad')), [Both])).rejects.toThrow(
      /Job 'both'.*cron.*a one-off job has no cron/,
    );
    await expect(bootApp(appOptions(uniqueNamespace('one-off-bad')), [Neither])).rejects.toThrow(JobConfigurationError);
    await expect(bootApp(appOptions(uniqueNamespace('one-off-bad')), [Neither])).rejects.toThrow(/oneOff: true/);
  });
});
