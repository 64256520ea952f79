import { Injectable } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { ElasticJobRegistry, ShardedJob, type ShardingContext } from '../../lib/index.js';
import { appOptions, bootApp } from '../support/app.js';
import { appRegistryCenter } from '../support/jobs.js';
import { hold, observer, proxyTo, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace } from '../support/zk.js';

/**
 * A manual trigger whose consume is cut by connection trouble (lib/job/trigger/trigger-reactions.ts): when the
 * connection comes back, the node is still there and still cached, so no second ADDED comes for it. It is taken
 * then, and the job runs once.
 */

afterEach(async () => {
  await releaseAll();
});

const runs: number[] = [];

@Injectable()
class ManualJob {
  @ShardedJob({ jobName: 'manual', cron: '0 0 0 1 1 *', shardingTotalCount: 1 })
  run(context: ShardingContext): void {
    runs.push(context.shardingItem);
  }
}

describe('a manual trigger cut by connection trouble', () => {
  it('is taken once connected again, and the job runs once', async () => {
    runs.length = 0;
    const namespace = uniqueNamespace('trigger-cut');
    const proxy = await proxyTo();
    const app = await bootApp(
      appOptions(namespace, {
        zookeeper: { serverLists: proxy.connectString, namespace, sessionTimeoutMilliseconds: 4000 },
      }),
      [ManualJob],
    );
    hold(() => app.close());
    const { instanceId } = app.get(ElasticJobRegistry).getJobStatus('manual');
    const registry = appRegistryCenter(app);
    const zk = await observer(namespace);
    const trigger = `/manual/trigger/${instanceId}`;
    const dropped = new Promise<void>((resolve) => {
      const off = registry.onStateChange((change) => {
        if (change.state !== 'SUSPENDED') return;
        off();
        resolve();
      });
    });
    // Heard by the server just now: its session outlives the liveness check below (2/3 of the session timeout).
    await registry.exists('/manual');
    // The app still hears the server (the trigger's notification), the server no longer hears the app (the consume's
    // read and delete), until the app's liveness check drops the connection: the consume fails, CONNECTION_LOSS.
    proxy.deafen();
    await zk.create(trigger, Buffer.alloc(0));
    await dropped;
    proxy.restore();
    await eventually(
      () => runs.length,
      (count) => count > 0,
      20_000,
      'the triggered run',
    );
    expect(runs).toEqual([0]);
    await eventually(
      () => zk.exists(trigger),
      (stat) => stat === undefined,
      10_000,
      'the trigger node consumed',
    );
  });
});
