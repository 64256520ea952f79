import { Injectable } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ElasticJobOperator,
  ElasticJobRegistry,
  JobNotFoundError,
  RegistryError,
  ShardedJob,
} from '../../lib/index.js';
import { appOptions, bootApp } from '../support/app.js';
import { appRegistryCenter } from '../support/jobs.js';
import { hold, proxyTo, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace } from '../support/zk.js';

/**
 * Every public call that talks to ZooKeeper ends within the connection timeout (issue 14, item 1): the ZooKeeper
 * client holds a request until it reconnects, which may be never.
 */

afterEach(async () => {
  await releaseAll();
});

@Injectable()
class YearlyJob {
  @ShardedJob({ jobName: 'yearly', cron: '0 0 0 1 1 *', shardingTotalCount: 2 })
  run(): void {}
}

const TIMEOUT_MS = 1500;

async function appBehindProxy() {
  const namespace = uniqueNamespace('bounded');
  const proxy = await proxyTo();
  const app = await bootApp(
    appOptions(namespace, {
      zookeeper: { serverLists: proxy.connectString, namespace, connectionTimeoutMilliseconds: TIMEOUT_MS },
    }),
    [YearlyJob],
  );
  hold(() => app.close());
  return { app, proxy };
}

describe('bounded public calls', () => {
  it('ElasticJobRegistry.trigger: an unknown job rejects (typed), it never throws synchronously', async () => {
    const { app } = await appBehindProxy();
    const jobs = app.get(ElasticJobRegistry);
    let pending: Promise<number> | undefined;
    expect(() => (pending = jobs.trigger('no-such-job'))).not.toThrow();
    await expect(pending).rejects.toThrow(JobNotFoundError);
    await expect(jobs.trigger('no-such-job')).rejects.toThrow(
      /No @ShardedJob\(\) named 'no-such-job' in this app; its jobs: yearly/,
    );
    expect(() => jobs.getJobStatus('no-such-job')).toThrow(JobNotFoundError);
    expect(await jobs.trigger('yearly')).toBe(1);
  });

  it('ElasticJobRegistry.trigger: ZooKeeper cut off → CONNECTION_LOSS within the connection timeout', async () => {
    const { app, proxy } = await appBehindProxy();
    proxy.cut();
    await eventually(
      () => appRegistryCenter(app).isConnected(),
      (up) => !up,
      10_000,
      'the app disconnected',
    );
    const startedAt = Date.now();
    await expect(app.get(ElasticJobRegistry).trigger('yearly')).rejects.toMatchObject({ code: 'CONNECTION_LOSS' });
    const took = Date.now() - startedAt;
    expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 50); // it did wait for the connection first
    expect(took).toBeLessThan(TIMEOUT_MS + 10_000); // and no longer than the bound (a generous margin)
  });

  it('ElasticJobOperator: a silent partition (connected, no answers) → CONNECTION_LOSS instead of a hang', async () => {
    const { app, proxy } = await appBehindProxy();
    const operator = app.get(ElasticJobOperator);
    expect((await operator.getAllJobsBriefInfo()).map((job) => job.jobName)).toEqual(['yearly']);
    proxy.freeze(); // the socket stays open: the client still thinks it is connected
    expect(appRegistryCenter(app).isConnected()).toBe(true);
    const error = await operator.getAllJobsBriefInfo().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RegistryError);
    expect(error).toMatchObject({ code: 'CONNECTION_LOSS' });
    expect(String(error)).toMatch(/no answer from ZooKeeper within 1500 ms/);
    // And the app still shuts down (it waited about two minutes here: each deregistration step for the session
    // timeout's 60 s default); the test's own timeout is the bound.
    const closing = Date.now();
    await app.close();
    const closeMs = Date.now() - closing;
    process.stdout.write(`app.close() under a silent partition: ${closeMs} ms\n`);
    expect(closeMs).toBeLessThan(30_000); // 5 s of clean-up and 2 s of client close, with a generous margin
  });
});
