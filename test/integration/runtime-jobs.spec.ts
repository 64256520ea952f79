import { afterEach, describe, expect, it } from 'vitest';
import { ElasticJobRegistry, JobConfigurationError, JobNotFoundError, type ShardingContext } from '../../lib/index.js';
import { appOptions, bootApp } from '../support/app.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace } from '../support/zk.js';

/**
 * Jobs added and removed at run time (ElasticJobRegistry.addJob / removeJob), as jobs defined in a database are:
 * two instances (apps with no decorated job) share one, one removes it and the other takes every item, it is added
 * again and shared again.
 */

afterEach(async () => {
  await releaseAll();
});

describe('jobs added at run time', () => {
  it('shard between the instances that add them, leave cleanly when removed, and can be added again', async () => {
    const namespace = uniqueNamespace('runtime-jobs');
    const apps = [
      await bootApp(appOptions(namespace, { instance: { ip: '127.0.0.2' } }), []),
      await bootApp(appOptions(namespace, { instance: { ip: '127.0.0.3' } }), []),
    ];
    for (const app of apps) hold(() => app.close());
    const registries = apps.map((app) => app.get(ElasticJobRegistry));
    const ran: Array<{ at: number; instance: number; item: number }> = [];
    const options = { jobName: 'from-db', cron: '* * * * * *', shardingTotalCount: 4 };
    const handler = (instance: number) => (context: ShardingContext) =>
      void ran.push({ at: Date.now(), instance, item: context.shardingItem });
    await registries[0]!.addJob(options, handler(0));
    await registries[1]!.addJob(options, handler(1));
    expect(registries[0]!.getJobNames()).toEqual(['from-db']);

    // Both run items once resharded: every item by exactly one of them in a firing.
    const sharedSince = Date.now();
    await eventually(
      () => new Set(ran.filter((run) => run.at > sharedSince).map((run) => run.instance)).size,
      (instances) => instances === 2,
      15_000,
      'both instances running items',
    );

    // One removes it: its instance node goes, the other takes every item.
    const zk = await observer(namespace);
    const removedId = registries[0]!.getJobStatus('from-db').instanceId;
    await registries[0]!.removeJob('from-db');
    expect(registries[0]!.getJobNames()).toEqual([]);
    expect(await zk.exists(`/from-db/instances/${removedId}`)).toBeUndefined();
    await eventually(
      () => registries[1]!.getJobStatus('from-db').shardingItems,
      (items) => items.length === 4,
      15_000,
      'the remaining instance owning every item',
    );
    const aloneSince = Date.now() + 1000;
    await eventually(
      () => ran.filter((run) => run.at > aloneSince && run.instance === 1).length,
      (n) => n >= 4,
      10_000,
      'a firing of all four items on the remaining instance',
    );
    expect(ran.filter((run) => run.at > aloneSince && run.instance === 0)).toEqual([]);

    // Added again: shared again.
    await registries[0]!.addJob(options, handler(0));
    const againSince = Date.now();
    await eventually(
      () => ran.filter((run) => run.at > againSince && run.instance === 0).length,
      (n) => n > 0,
      15_000,
      'the re-added instance running items',
    );
  });

  it('refuses a bad option before writing anything, a name the app already has, and an unknown job to remove', async () => {
    const namespace = uniqueNamespace('runtime-bad');
    const app = await bootApp(appOptions(namespace), []);
    hold(() => app.close());
    const registry = app.get(ElasticJobRegistry);
    await expect(
      registry.addJob({ jobName: 'bad', cron: 'not a cron', shardingTotalCount: 1 }, () => undefined),
    ).rejects.toThrow(JobConfigurationError);
    const zk = await observer(namespace);
    expect(await zk.exists('/bad')).toBeUndefined();
    await registry.addJob({ jobName: 'once', cron: '0 0 0 1 1 *', shardingTotalCount: 1 }, () => undefined);
    await expect(
      registry.addJob({ jobName: 'once', cron: '0 0 0 1 1 *', shardingTotalCount: 1 }, () => undefined),
    ).rejects.toThrow(/Job 'once'.*already a job of this app/);
    await expect(registry.removeJob('never')).rejects.toBeInstanceOf(JobNotFoundError);
  });
});
