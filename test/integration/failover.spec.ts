import { Injectable } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { ElasticJobRegistry, ShardedJob, type ShardingContext } from '../../lib/index.js';
import type { ConnectionStateChange } from '../../lib/registry/registry.types.js';
import type { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import { appOptions, bootApp } from '../support/app.js';
import { appRegistryCenter, betweenFirings, jobStorage } from '../support/jobs.js';
import { hold, observer, proxyTo, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace } from '../support/zk.js';

afterEach(async () => {
  await releaseAll();
});

const runs: number[] = [];

@Injectable()
class YearlyFailoverJob {
  // Fires once a year: any run within the test is a failover run.
  @ShardedJob({ jobName: 'fo', cron: '0 0 0 1 1 *', shardingTotalCount: 2, failover: true })
  run(context: ShardingContext): void {
    runs.push(context.shardingItem);
  }
}

@Injectable()
class EverySecondFailoverJob {
  @ShardedJob({ jobName: 'fo2', cron: '* * * * * *', shardingTotalCount: 2, failover: true })
  run(context: ShardingContext): void {
    runs.push(context.shardingItem);
  }
}

/** A fake peer: an ephemeral instance node held by an observer session, as a Java or Node instance would write it. */
async function fakePeer(zk: ZookeeperRegistryCenter, job: string, id: string): Promise<void> {
  const ip = id.split('@-@')[0]!;
  await zk.persist(`/${job}/servers/${ip}`, Buffer.from('ENABLED'));
  await zk.createWithParents(
    `/${job}/instances/${id}`,
    Buffer.from(`jobInstanceId: ${id}\nserverIp: ${ip}\n`),
    'EPHEMERAL',
  );
}

describe('failover', () => {
  it('a peer that dies while running an item: we flag exactly that item, claim it, run it, and clean up', async () => {
    runs.length = 0;
    const namespace = uniqueNamespace('fo-crash');
    const zk = await observer(namespace);
    const app = await bootApp(appOptions(namespace), [YearlyFailoverJob]);
    hold(() => app.close());
    const peer = '10.7.7.7@-@77';
    await fakePeer(zk, 'fo', peer);
    await zk.persist('/fo/sharding/0/instance', Buffer.from(peer));
    await zk.persist('/fo/sharding/1/instance', Buffer.from(peer));
    await zk.createWithParents('/fo/sharding/0/running', Buffer.from(peer), 'PERSISTENT'); // it was running item 0 only
    // No wait needed: ZooKeeper delivers the events in order, and the job's cache applies them in that order.
    await zk.remove(`/fo/instances/${peer}`); // it crashes
    await eventually(
      () => runs,
      (r) => r.length >= 1,
      10_000,
      'the taken-over item',
    );
    expect(runs).toEqual([0]);
    await eventually(
      async () => [
        await zk.exists('/fo/sharding/0/failover'),
        await zk.exists('/fo/sharding/0/failovering'),
        await zk.exists('/fo/sharding/0/running'),
      ],
      (nodes) => nodes.every((n) => n === undefined),
      10_000,
      'markers cleaned after the run',
    );
    expect(await zk.getChildren('/fo/leader/failover/items')).toEqual([]);
  });

  it('a taker that dies has its failovering items flagged again and run by us', async () => {
    runs.length = 0;
    const namespace = uniqueNamespace('fo-taker');
    const zk = await observer(namespace);
    const app = await bootApp(appOptions(namespace), [YearlyFailoverJob]);
    hold(() => app.close());
    const taker = '10.8.8.8@-@88';
    await fakePeer(zk, 'fo', taker);
    await zk.createWithParents('/fo/sharding/1/failovering', Buffer.from(taker), 'PERSISTENT');
    // No wait needed: ZooKeeper delivers the events in order, and the job's cache applies them in that order.
    await zk.remove(`/fo/instances/${taker}`);
    await eventually(
      () => runs,
      (r) => r.length >= 1,
      10_000,
      'the re-flagged item',
    );
    expect(runs).toEqual([1]);
  });

  it('after a whole-cluster restart, the only instance recovers items left running by instances that are gone', async () => {
    runs.length = 0;
    const namespace = uniqueNamespace('fo-legacy');
    const zk = await observer(namespace);
    await zk.createWithParents('/fo/sharding/0/running', Buffer.from('10.6.6.6@-@66'), 'PERSISTENT');
    const app = await bootApp(appOptions(namespace), [YearlyFailoverJob]);
    hold(() => app.close());
    await eventually(
      () => runs,
      (r) => r.length >= 1,
      10_000,
      'the recovered item',
    );
    expect(runs).toEqual([0]);
  });

  it("the owner's firings skip an item someone else has taken over", async () => {
    runs.length = 0;
    const namespace = uniqueNamespace('fo-skip');
    const zk = await observer(namespace);
    const app = await bootApp(appOptions(namespace), [EverySecondFailoverJob]);
    hold(() => app.close());
    await eventually(
      () => new Set(runs).size,
      (n) => n === 2,
      10_000,
      'both items running',
    );
    await zk.createWithParents('/fo2/sharding/0/failover', Buffer.from('10.5.5.5@-@55'), 'EPHEMERAL');
    // Once the app's cache shows the takeover, every firing that starts decides without item 0; one already under
    // way may still run it, so count only the runs of firings that start after the job is next seen between firings.
    await eventually(
      () => jobStorage(app, 'fo2').cached.get('/fo2/sharding/0/failover'),
      (taker) => taker === '10.5.5.5@-@55',
      10_000,
      'the takeover seen by the app',
    );
    await betweenFirings(app, 'fo2', () => (runs.length = 0));
    // Three runs: at least two firings (each would run both items if item 0 were not skipped).
    await eventually(
      () => runs.length,
      (n) => n >= 3,
      10_000,
      'three more runs',
    );
    expect(new Set(runs)).toEqual(new Set([1]));
  });
});

let steadyRuns = 0;
@Injectable()
class SteadyJob {
  @ShardedJob({ jobName: 'steady', cron: '* * * * * *', shardingTotalCount: 1 })
  run(): void {
    steadyRuns++;
  }
}

describe('reconnect within the session', () => {
  it('resumes without touching the instance node (ElasticJob #687 recreated it)', async () => {
    const proxy = await proxyTo();
    const namespace = uniqueNamespace('reconnect');
    const zk = await observer(namespace);
    const app = await bootApp(
      appOptions(namespace, {
        zookeeper: { serverLists: proxy.connectString, namespace, sessionTimeoutMilliseconds: 6000 },
      }),
      [SteadyJob],
    );
    hold(() => app.close());
    const me = app.get(ElasticJobRegistry).getJobStatus('steady').instanceId;
    const path = `/steady/instances/${me}`;
    const owner = (await zk.getData(path))!.stat.ephemeralOwner;
    const events: string[] = [];
    await zk.getData(path, (event) => events.push(event.type));
    const states: ConnectionStateChange[] = [];
    hold(appRegistryCenter(app).onStateChange((change) => states.push(change)));
    proxy.cut();
    // Cut off: the app has noticed (and keeps being refused until the restore).
    await eventually(
      () => states.map((s) => s.state),
      (s) => s.includes('SUSPENDED'),
      10_000,
      'the app disconnected',
    );
    proxy.restore();
    await eventually(
      () => states.map((s) => s.state),
      (s) => s.includes('RECONNECTED'),
      10_000,
      'the app reconnected',
    );
    expect(states).toEqual([
      { state: 'SUSPENDED', newSession: false },
      { state: 'RECONNECTED', newSession: false },
    ]);
    const before = steadyRuns;
    await eventually(
      () => steadyRuns,
      (n) => n >= before + 2,
      10_000,
      'firing again',
    );
    expect(events).toEqual([]); // never deleted, never changed
    expect((await zk.getData(path))!.stat.ephemeralOwner).toBe(owner);
  });
});
