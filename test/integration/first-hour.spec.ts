import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { type INestApplication, Injectable, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ElasticJobModule,
  ElasticJobRegistry,
  JobConfigurationError,
  ShardedJob,
  type ZookeeperConfiguration,
} from '../../lib/index.js';
import { ElasticJobConsoleModule } from '../../lib/console/index.js';
import { ElasticJobOrchestrator } from '../../lib/elastic-job.orchestrator.js';
import { uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * A Nest user's first hour (issue 39): the servers from ZK_CONNECT when `serverLists` is left out (and a refusal
 * naming both ways when neither is there), a 5-field cron's start-up line saying how it was read, a line when the
 * wait for an unreachable ZooKeeper begins, and the console's 503 within the bound its message states.
 */

const closers: Array<() => Promise<unknown>> = [];
const savedZkConnect = process.env.ZK_CONNECT;
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
  if (savedZkConnect === undefined) delete process.env.ZK_CONNECT;
  else process.env.ZK_CONNECT = savedZkConnect;
  vi.restoreAllMocks();
});

@Injectable()
class FiveFieldJob {
  // 5 fields: minute first. Fires on January 1st only, so never while the test runs.
  @ShardedJob({ jobName: 'five-fields', cron: '0 0 1 1 *', shardingTotalCount: 1 })
  run(): void {}
}

/** Every line the library logs, in order, with its level and context. */
function recordLogs(): Array<{ level: string; context: string; text: string }> {
  const lines: Array<{ level: string; context: string; text: string }> = [];
  for (const level of ['log', 'warn', 'error'] as const)
    vi.spyOn(Logger.prototype, level).mockImplementation(function (this: Logger, message: unknown) {
      lines.push({ level, context: (this as unknown as { context?: string }).context ?? '', text: String(message) });
    });
  return lines;
}

async function boot(zookeeper: Partial<ZookeeperConfiguration>, providers = [FiveFieldJob]) {
  @Module({
    imports: [ElasticJobModule.forRoot({ zookeeper: zookeeper as ZookeeperConfiguration })],
    providers,
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  closers.push(() => moduleRef.close());
  await moduleRef.init();
  return moduleRef;
}

describe('zookeeper.serverLists left out', () => {
  it('is read from ZK_CONNECT, as the command line reads it; a 5-field cron is said to be read minute first', async () => {
    process.env.ZK_CONNECT = zkConnect();
    const logs = recordLogs();
    const moduleRef = await boot({ namespace: uniqueNamespace('from-env'), sessionTimeoutMilliseconds: 4000 });
    expect(moduleRef.get(ElasticJobRegistry).getJobStatus('five-fields').registered).toBe(true);
    expect(logs.find((line) => line.context === 'ElasticJob:ZooKeeper')?.text).toContain(
      `connecting to ZooKeeper at ${zkConnect()} `,
    );
    const registered = logs.find(
      (line) => line.context === 'ElasticJob:five-fields' && line.text.startsWith('registered'),
    );
    expect(registered?.text).toContain(
      "cron '0 0 1 1 *' has 5 fields: read minute first, as '0 0 0 1 1 *' (6 fields are read seconds first)",
    );
  });

  it('is refused, naming both ways, when ZK_CONNECT is not set either', async () => {
    delete process.env.ZK_CONNECT;
    const failure = await boot({ namespace: uniqueNamespace('no-servers') }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(JobConfigurationError);
    expect((failure as JobConfigurationError).field).toBe('zookeeper.serverLists');
    expect(String((failure as Error).message)).toMatch(/zookeeper\.serverLists.*ZK_CONNECT/);
  });
});

describe('ZooKeeper unreachable at start', () => {
  it('says where it waits and for how long before the wait, and that it goes on after it', async () => {
    const logs = recordLogs();
    await boot({ serverLists: '127.0.0.1:1', namespace: uniqueNamespace('away'), connectionTimeoutMilliseconds: 500 });
    const zookeeperLines = logs.filter((line) => line.context === 'ElasticJob:ZooKeeper');
    expect(zookeeperLines[0]?.level).toBe('log');
    expect(zookeeperLines[0]?.text).toMatch(
      /^connecting to ZooKeeper at 127\.0\.0\.1:1 \(namespace 'away-\w+'\); waiting up to 500 ms for it \(zookeeper\.connectionTimeoutMilliseconds\)$/,
    );
    expect(zookeeperLines[1]?.text).toMatch(/^not connected to ZooKeeper at 127\.0\.0\.1:1 after 500 ms/);
  });

  it("has the console answer 503 after one wait of the bound its message states, not two in a row (the watch's and the read's)", async () => {
    const bound = 1500;
    @Module({
      imports: [
        ElasticJobModule.forRoot({
          zookeeper: {
            serverLists: '127.0.0.1:1',
            namespace: uniqueNamespace('console-away'),
            connectionTimeoutMilliseconds: bound,
          },
        }),
        ElasticJobConsoleModule.forRoot({}),
      ],
      providers: [FiveFieldJob],
    })
    class ConsoleApp {}
    const app: INestApplication = await NestFactory.create(ConsoleApp, { logger: false });
    closers.push(() => app.close());
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as AddressInfo;
    // Every wait for the connection on the app's session, in order: the watch's and the read's, side by side, both
    // begin before either ends (one after the other, the 503 came after twice the bound).
    const registry = await app.get(ElasticJobOrchestrator).operatorRegistry();
    const waits: string[] = [];
    const wait = registry.waitForConnection.bind(registry);
    vi.spyOn(registry, 'waitForConnection').mockImplementation(async (timeoutMs) => {
      waits.push('begins');
      const connected = await wait(timeoutMs);
      waits.push('ends');
      return connected;
    });
    for (const route of ['api/jobs', 'api/jobs/five-fields']) {
      waits.length = 0;
      const response = await fetch(`http://127.0.0.1:${port}/elastic-job/${route}`);
      expect(response.status, route).toBe(503);
      const { message } = (await response.json()) as { message: string };
      const stated = Number(/after waiting (\d+) ms/.exec(message)?.[1]);
      expect(stated, message).toBe(bound);
      expect(waits.length, route).toBeGreaterThan(0);
      expect(waits.lastIndexOf('begins'), `${route}: ${waits.join(', ')}`).toBeLessThan(waits.indexOf('ends'));
    }
  });
});
