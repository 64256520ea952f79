import { Injectable } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ElasticJobOperator,
  ElasticJobRegistry,
  InvalidOperationError,
  JobConfigurationError,
  JobNotFoundError,
  ShardedJob,
  type ShardingContext,
} from '../../lib/index.js';
import { appOptions, bootApp } from '../support/app.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * The execution history without a database: each app keeps its recent executions in memory, and the operator asks
 * every instance of the cluster through ZooKeeper (three apps here, told apart by `instance.ip`).
 */

afterEach(async () => {
  await releaseAll();
});

let completed = 0;

@Injectable()
class ReportJobs {
  /** Item 1 fails, with a stack. */
  @ShardedJob({ jobName: 'report', cron: '0 0 0 1 1 *', shardingTotalCount: 6 })
  report(context: ShardingContext): void {
    completed++;
    if (context.shardingItem === 1) throw new Error(`item 1 of ${context.jobName} cannot reach the warehouse`);
  }

  @ShardedJob({ jobName: 'audit', cron: '0 0 0 1 1 *', shardingTotalCount: 3 })
  audit(): void {
    completed++;
  }
}

const IPS = ['10.0.8.1', '10.0.8.2', '10.0.8.3'];

async function cluster(): Promise<{ namespace: string; apps: TestingModule[]; operator: ElasticJobOperator }> {
  const namespace = uniqueNamespace('cluster-executions');
  const apps: TestingModule[] = [];
  for (const ip of IPS) {
    const app = await bootApp(appOptions(namespace, { instance: { ip } }), [ReportJobs]);
    hold(() => app.close());
    apps.push(app);
  }
  const operator = await ElasticJobOperator.connect({ serverLists: zkConnect(), namespace });
  hold(() => operator.close());
  return { namespace, apps, operator };
}

describe('execution history without a database', () => {
  it("gathers every instance's in-memory log through ZooKeeper, filtered and paged, and leaves no node behind", async () => {
    const { namespace, apps, operator } = await cluster();
    const instanceIds = IPS.map((ip) => `${ip}@-@${process.pid}`);
    completed = 0;
    await operator.trigger('report');
    await operator.trigger('audit');
    await eventually(
      () => completed,
      (n) => n === 9,
      15_000,
      'both jobs to run every item',
    );
    // Each app's own log: what ran there.
    const local = apps[0]!.get(ElasticJobRegistry).recentExecutions({ limit: 50 });
    expect(local.length).toBeGreaterThan(0);
    expect(new Set(local.map((record) => record.instanceId))).toEqual(new Set([instanceIds[0]]));

    // The cluster's, through ZooKeeper: every instance answers, all nine executions, newest first.
    const all = await eventually(
      () => operator.getExecutions({ limit: 50 }),
      (answer) => answer.executions.filter((record) => record.completeTime).length === 9,
      10_000,
      'every completion in the logs',
    );
    expect(all.answered).toEqual(instanceIds);
    expect(all.missing).toEqual([]);
    const starts = all.executions.map((record) => record.startTime!.getTime());
    expect(starts).toEqual([...starts].sort((a, b) => b - a));

    // The failure, with its stack, where it ran.
    const failures = await operator.getExecutions({ result: 'failure', limit: 10 });
    expect(failures.executions).toHaveLength(1);
    const [failure] = failures.executions;
    expect(failure).toMatchObject({ jobName: 'report', item: 1, success: false, source: 'NORMAL_TRIGGER' });
    expect(failure!.failureCause).toMatch(/^Error: item 1 of report cannot reach the warehouse\n\s+at /);
    const owner = (await operator.getShardingInfo('report')).find((item) => item.item === 1)!.instanceId;
    expect(failure!.instanceId).toBe(owner);

    // Filters: a job, an item, an instance; pages.
    const audit = await operator.getExecutions({ jobName: 'audit', limit: 10 });
    expect(audit.executions.map((record) => record.item).sort()).toEqual([0, 1, 2]);
    expect((await operator.getExecutions({ jobName: 'report', item: 4, limit: 10 })).executions).toHaveLength(1);
    const mine = await operator.getExecutions({ instance: instanceIds[1]!, limit: 50 });
    expect(mine.executions.every((record) => record.instanceId === instanceIds[1])).toBe(true);
    const firstPage = await operator.getExecutions({ limit: 4 });
    const secondPage = await operator.getExecutions({ limit: 4, offset: 4 });
    expect([...firstPage.executions, ...secondPage.executions].map((record) => record.id)).toEqual(
      all.executions.slice(0, 8).map((record) => record.id),
    );
    const none = await operator.getExecutions({ from: new Date(Date.now() + 60_000), limit: 10 });
    expect(none.executions).toEqual([]);

    // An instance that never answers (a Java peer, or one cut off) is named after the timeout; the rest still count.
    const zk = await observer(namespace);
    await zk.create('/audit/instances/10.0.8.9@-@1', Buffer.alloc(0), 'EPHEMERAL');
    const partial = await operator.getExecutions({ jobName: 'audit', limit: 10 }, { timeoutMs: 500 });
    expect(partial.missing).toEqual(['10.0.8.9@-@1']);
    expect(partial.answered).toEqual(instanceIds);
    await zk.remove('/audit/instances/10.0.8.9@-@1');

    // A watcher of the namespace is not told of the queries' nodes (a console re-querying on changes would loop):
    // the first change it hears is the item disabled after a query, on the other job.
    const heard: string[][] = [];
    const watch = await operator.watch((change) => {
      if (change.kind === 'jobs') heard.push([...change.jobNames]);
    });
    await operator.getExecutions({ jobName: 'report', limit: 10 });
    await operator.disableItem('audit', 0);
    await eventually(
      () => heard.flat(),
      (jobs) => jobs.includes('audit'),
      10_000,
      'the disabled item heard',
    );
    watch.close();
    expect(heard.flat()).not.toContain('report');
    await operator.enableItem('audit', 0);

    // Nothing of the queries stays in the tree.
    for (const job of ['report', 'audit']) expect((await zk.getChildren(`/${job}/executions`)) ?? []).toEqual([]);
  });

  it('refuses bad queries before anything is written, and an unknown job', async () => {
    const { operator } = await cluster();
    await expect(operator.getExecutions({ limit: 0 })).rejects.toThrow(InvalidOperationError);
    await expect(operator.getExecutions({ limit: 10, result: 'ok' as never })).rejects.toThrow(/result/);
    await expect(operator.getExecutions({ limit: 10, instance: 'nobody' })).rejects.toThrow(/instance/);
    await expect(operator.getExecutions({ limit: 10, from: new Date('x') })).rejects.toThrow(/from/);
    await expect(operator.getExecutions({ limit: 10, jobName: 'a/b' })).rejects.toThrow(InvalidOperationError);
    await expect(operator.getExecutions({ limit: 10, bogus: 1 } as never)).rejects.toThrow(/bogus/);
    await expect(operator.getExecutions({ jobName: 'no-such-job', limit: 10 })).rejects.toThrow(JobNotFoundError);
    // How deep a query may page is bounded: each instance sends offset + limit executions at most.
    await expect(operator.getExecutions({ offset: 990, limit: 20 })).rejects.toThrow(
      /offset \+ limit must be at most 1000/,
    );
  });

  it('keeps what the executionLog option says: a bounded count, or nothing', async () => {
    const namespace = uniqueNamespace('execution-log-size');
    const small = await bootApp(appOptions(namespace, { executionLog: { size: 2 } }), [ReportJobs]);
    hold(() => small.close());
    completed = 0;
    const registry = small.get(ElasticJobRegistry);
    await registry.trigger('report');
    await eventually(
      () => completed,
      (n) => n === 6,
      15_000,
      'the six items',
    );
    await eventually(
      () => registry.recentExecutions({ limit: 10 }).filter((record) => record.completeTime),
      (records) => records.length === 2,
      5_000,
      'the last two completions',
    );
    const off = await bootApp(appOptions(uniqueNamespace('execution-log-off'), { executionLog: false }), [ReportJobs]);
    hold(() => off.close());
    expect(off.get(ElasticJobRegistry).recentExecutions({ limit: 10 })).toEqual([]);
    await expect(bootApp(appOptions(namespace, { executionLog: { size: 0 } }), [ReportJobs])).rejects.toThrow(
      JobConfigurationError,
    );
  });
});
