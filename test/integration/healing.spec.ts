import { Injectable } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { ElasticJobRegistry, ShardedJob } from '../../lib/index.js';
import { resolveJobConfiguration } from '../../lib/job/config/job-configuration.validator.js';
import { JobScheduler } from '../../lib/job/scheduler/job-scheduler.js';
import { appOptions, bootApp } from '../support/app.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, startRegistry, uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * Failures that heal: a job never stays "registered" without its nodes, nor unregistered for good without saying so.
 */

afterEach(async () => {
  await releaseAll();
});

let healedRuns = 0;
@Injectable()
class HealingJob {
  @ShardedJob({ jobName: 'heal', cron: '* * * * * *', shardingTotalCount: 2 })
  run(): void {
    healedRuns++;
  }
}

describe('a registration that fails', () => {
  it('is retried in the background, reported in health, until it succeeds', async () => {
    const namespace = uniqueNamespace('heal');
    healedRuns = 0;
    // Another session holds `instances` as an ephemeral node: ZooKeeper refuses children under it
    // (NO_CHILDREN_FOR_EPHEMERALS), so registration fails until that session ends.
    const blocker = await startRegistry({ namespace });
    hold(() => blocker.close());
    await blocker.createWithParents('/heal/instances', Buffer.alloc(0), 'EPHEMERAL');
    const app = await bootApp(
      appOptions(namespace, {
        zookeeper: {
          serverLists: zkConnect(),
          namespace,
          sessionTimeoutMilliseconds: 4000,
          baseSleepTimeMilliseconds: 100,
          maxSleepTimeMilliseconds: 200,
        },
      }),
      [HealingJob],
    );
    hold(() => app.close());
    const status = () => app.get(ElasticJobRegistry).getJobStatus('heal');
    expect(status()).toMatchObject({ registered: false, health: { registration: 'retrying' } });
    expect(status().health.lastError).toMatch(/NO_CHILDREN_FOR_EPHEMERALS/);
    const failingSince = status().health.since;
    // Nothing half-registered: an attempt writes the leader node with or after its instance node, so attempts that
    // fail at the instance never show peers a leader (this was flaky while one wrote it first, then took it back).
    const zk = await observer(namespace);
    expect(await zk.exists('/heal/leader/election/instance')).toBeUndefined();
    await blocker.close();
    await eventually(
      () => status().health.registration,
      (registration) => registration === 'ok',
      15_000,
      'the registration to succeed',
    );
    expect(status().registered).toBe(true);
    expect(status().health.since.getTime()).toBeGreaterThan(failingSince.getTime());
    expect(status().health.lastError).toBeUndefined();
    await eventually(
      () => healedRuns,
      (runs) => runs >= 2,
      10_000,
      'the job to run',
    );
  });
});

describe("reconcile's look at our own nodes", () => {
  it('puts our server node back when it goes missing', async () => {
    const namespace = uniqueNamespace('own-nodes');
    const zk = await observer(namespace);
    const registry = await startRegistry({ namespace });
    hold(() => registry.close());
    const config = resolveJobConfiguration({ jobName: 'own', cron: '0 0 0 1 1 *', shardingTotalCount: 1 });
    const scheduler = new JobScheduler(
      { config, owner: 'Test.own', handler: () => undefined },
      registry,
      { ip: '127.0.0.1', pid: process.pid },
      { waitTimeoutMs: 10_000, baseSleepTimeMs: 100, maxSleepTimeMs: 500, maxRetries: 3, reconcileMinuteMs: 200 },
    );
    hold(() => scheduler.shutdown(0));
    await scheduler.register();
    expect(scheduler.status().health.registration).toBe('ok');
    await zk.remove('/own/servers/127.0.0.1');
    await eventually(
      () => zk.getData('/own/servers/127.0.0.1'),
      (node) => node?.data.toString() === 'ENABLED',
      10_000,
      'the server node back',
    );
  });
});
