import { Injectable } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { ElasticJobRegistry, ShardedJob, type ShardingContext } from '../../lib/index.js';
import { resolveJobConfiguration } from '../../lib/job/config/job-configuration.validator.js';
import { toConfigYaml } from '../../lib/job/config/job-configuration.yaml.js';
import { JobScheduler } from '../../lib/job/scheduler/job-scheduler.js';
import type { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import { appOptions, bootApp } from '../support/app.js';
import { aLaterFiringCompleted, betweenFirings, jobStorage } from '../support/jobs.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, startRegistry, uniqueNamespace } from '../support/zk.js';

afterEach(async () => {
  await releaseAll();
});

async function boot(namespace: string, providers: Array<new (...args: never[]) => unknown>) {
  const app = await bootApp(appOptions(namespace), providers);
  hold(() => app.close());
  return app;
}

const text = async (zk: ZookeeperRegistryCenter, path: string) => (await zk.getData(path))?.data.toString('utf8');

/** Rewrites fields of the stored config node, as an operator (or ElasticJob's lifecycle API) would. */
async function editConfig(zk: ZookeeperRegistryCenter, job: string, edit: (yaml: string) => string): Promise<void> {
  const yaml = (await text(zk, `/${job}/config`))!;
  await zk.setData(`/${job}/config`, Buffer.from(edit(yaml)));
}

const runs: Record<string, number[]> = {};
const record = (context: ShardingContext) => (runs[context.jobName] ??= []).push(context.shardingItem);

// toggle and static: maxTimeDiffSeconds makes every firing write systemTime/current first, whatever it then runs;
// aLaterFiringCompleted waits on that, so a test can tell that a firing came and ran nothing.
@Injectable()
class Jobs {
  @ShardedJob({ jobName: 'toggle', cron: '* * * * * *', shardingTotalCount: 2, maxTimeDiffSeconds: 3600 })
  toggle(context: ShardingContext): void {
    record(context);
  }

  @ShardedJob({ jobName: 'yearly', cron: '0 0 0 1 1 *', shardingTotalCount: 2, failover: true })
  yearly(context: ShardingContext): void {
    record(context);
  }

  @ShardedJob({
    jobName: 'static',
    cron: '* * * * * *',
    shardingTotalCount: 2,
    staticSharding: true,
    maxTimeDiffSeconds: 3600,
  })
  static(context: ShardingContext): void {
    record(context);
  }
}

describe('the listener catalogue', () => {
  it('abdicates when the local server is disabled and runs nothing; elects again and runs when it is re-enabled', async () => {
    for (const key of Object.keys(runs)) delete runs[key];
    const namespace = uniqueNamespace('toggle');
    const zk = await observer(namespace);
    const app = await boot(namespace, [Jobs]);
    const me = app.get(ElasticJobRegistry).getJobStatus('toggle').instanceId;
    const ip = me.split('@-@')[0]!;
    await eventually(
      () => (runs.toggle ?? []).length,
      (n) => n >= 2,
      10_000,
      'runs',
    );
    await zk.setData(`/toggle/servers/${ip}`, Buffer.from('DISABLED'));
    // Abdication is the app's reaction to the DISABLED it has seen: from the next time the job is between firings on,
    // every firing starts knowing it. One that starts later must come, and run nothing.
    await eventually(
      () => zk.exists('/toggle/leader/election/instance'),
      (s) => s === undefined,
      10_000,
      'abdication',
    );
    let before = -1;
    await betweenFirings(app, 'toggle', () => (before = runs.toggle!.length));
    await aLaterFiringCompleted(app, zk, 'toggle');
    expect(runs.toggle!.length).toBe(before);
    await zk.setData(`/toggle/servers/${ip}`, Buffer.from('ENABLED'));
    await eventually(
      () => text(zk, '/toggle/leader/election/instance'),
      (id) => id === me,
      10_000,
      're-election',
    );
    await eventually(
      () => runs.toggle!.length,
      (n) => n >= before + 2,
      10_000,
      'runs again',
    );
  });

  it('reschedules on a cron change and reshards on a shardingTotalCount change made in ZooKeeper', async () => {
    for (const key of Object.keys(runs)) delete runs[key];
    const namespace = uniqueNamespace('edit');
    const zk = await observer(namespace);
    const app = await boot(namespace, [Jobs]);
    const registry = app.get(ElasticJobRegistry);
    expect(registry.getJobStatus('yearly').nextFireTime!.getTime()).toBeGreaterThan(Date.now() + 86_400_000);
    await editConfig(zk, 'yearly', (y) => y.replace(/^cron: .*$/m, "cron: '* * * * * *'"));
    await eventually(
      () => registry.getJobStatus('yearly').nextFireTime!.getTime(),
      (t) => t < Date.now() + 2000,
      10_000,
      'rescheduled',
    );
    await eventually(
      () => new Set(runs.yearly ?? []).size,
      (n) => n === 2,
      10_000,
      'both items running on the new cron',
    );
    await editConfig(zk, 'yearly', (y) => y.replace(/^shardingTotalCount: .*$/m, 'shardingTotalCount: 4'));
    await eventually(
      () => registry.getJobStatus('yearly').shardingItems,
      (items) => items.length === 4,
      10_000,
      'four items',
    );
    await eventually(
      () => new Set(runs.yearly).size,
      (n) => n === 4,
      10_000,
      'four items running',
    );
  });

  it('removes running markers when monitorExecution is switched off, failover markers when failover is', async () => {
    const namespace = uniqueNamespace('switch');
    const zk = await observer(namespace);
    await boot(namespace, [Jobs]);
    await zk.createWithParents('/yearly/sharding/0/running', Buffer.from('ghost@-@1'), 'PERSISTENT');
    await zk.createWithParents('/yearly/sharding/1/failover', Buffer.from('ghost@-@1'), 'PERSISTENT');
    await editConfig(zk, 'yearly', (y) => y.replace('monitorExecution: true', 'monitorExecution: false'));
    await eventually(
      () => zk.exists('/yearly/sharding/0/running'),
      (s) => s === undefined,
      10_000,
      'running marker removed',
    );
    expect(await text(zk, '/yearly/sharding/1/failover')).toBe('ghost@-@1');
    await editConfig(zk, 'yearly', (y) => y.replace('failover: true', 'failover: false'));
    await eventually(
      () => zk.exists('/yearly/sharding/1/failover'),
      (s) => s === undefined,
      10_000,
      'failover marker removed',
    );
  });

  it('staticSharding keeps the assignment when an instance joins', async () => {
    const namespace = uniqueNamespace('static');
    const zk = await observer(namespace);
    const app = await boot(namespace, [Jobs]);
    const registry = app.get(ElasticJobRegistry);
    await eventually(
      () => registry.getJobStatus('static').shardingItems,
      (items) => items.length === 2,
      10_000,
      'sharded',
    );
    await zk.persist('/static/servers/10.9.9.9', Buffer.from('ENABLED'));
    await zk.createWithParents(
      '/static/instances/10.9.9.9@-@1',
      Buffer.from('jobInstanceId: 10.9.9.9@-@1\nserverIp: 10.9.9.9\n'),
      'EPHEMERAL',
    );
    // The app has seen the join (without staticSharding it would flag resharding then), and a firing since has run
    // (it would have resharded).
    await eventually(
      () => jobStorage(app, 'static').cached.has('/static/instances/10.9.9.9@-@1'),
      (seen) => seen,
      10_000,
      'the join seen by the app',
    );
    await aLaterFiringCompleted(app, zk, 'static');
    expect(await zk.exists('/static/leader/sharding/necessary')).toBeUndefined();
    expect(registry.getJobStatus('static').shardingItems).toEqual([0, 1]);
  });

  it('a running marker whose owner is offline never blocks sharding or the item (ElasticJob #49, #467, #1754)', async () => {
    for (const key of Object.keys(runs)) delete runs[key];
    const namespace = uniqueNamespace('stale');
    const zk = await observer(namespace);
    await zk.createWithParents('/toggle/sharding/0/running', Buffer.from('10.1.1.1@-@99'), 'PERSISTENT');
    await boot(namespace, [Jobs]);
    await eventually(
      () => new Set(runs.toggle ?? []).size,
      (n) => n === 2,
      10_000,
      'both items, item 0 included',
    );
    expect(await zk.exists('/toggle/leader/sharding/necessary')).toBeUndefined();
  });
});

describe('reconcile', () => {
  it('flags resharding when an item has no live owner', async () => {
    const namespace = uniqueNamespace('reconcile');
    const zk = await observer(namespace);
    const registry = await startRegistry({ namespace });
    hold(() => registry.close());
    const config = resolveJobConfiguration({
      jobName: 'rec',
      cron: '0 0 0 1 1 *',
      shardingTotalCount: 2,
      reconcileIntervalMinutes: 1,
    });
    expect(toConfigYaml(config)).toContain('reconcileIntervalMinutes: 1');
    const scheduler = new JobScheduler(
      { config, owner: 'Test.rec', handler: () => undefined },
      registry,
      { ip: '127.0.0.1', pid: process.pid },
      { waitTimeoutMs: 10_000, baseSleepTimeMs: 100, maxSleepTimeMs: 500, maxRetries: 3, reconcileMinuteMs: 200 },
    );
    hold(() => scheduler.shutdown(0));
    await scheduler.register();
    await scheduler.triggerAllInstances(); // one firing: shards
    await eventually(
      () => zk.exists('/rec/sharding/1/instance'),
      (s) => s !== undefined,
      10_000,
      'sharded',
    );
    await eventually(
      () => zk.exists('/rec/leader/sharding/necessary'),
      (s) => s === undefined,
      10_000,
      'flag consumed',
    );
    await zk.setData('/rec/sharding/1/instance', Buffer.from('10.1.1.1@-@99'));
    await eventually(
      () => zk.exists('/rec/leader/sharding/necessary'),
      (s) => s !== undefined,
      10_000,
      'reconcile flag',
    );
  });
});
