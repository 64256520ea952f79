import { Injectable, Logger } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ElasticJobRegistry, ShardedJob, type ShardingContext } from '../../lib/index.js';
import type { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import { appOptions, bootApp } from '../support/app.js';
import { eventually, startRegistry, uniqueNamespace } from '../support/zk.js';

/**
 * What operators and other tools write into a job's tree (zkCli, ElasticJob's console, ElasticJob 2.x): refused
 * whole with a log naming the node, or read as ElasticJob reads it, and never a job that silently stops.
 *
 * Each case boots its own app on its own namespace with its own job class, so the cases run at once: each waits on
 * firings a second apart, and run in turn they took a minute.
 */

interface Run {
  item: number;
  at: number;
  parameter: string | undefined;
  jobParameter: string;
  /** Who `sharding/{item}/running` named while the item ran. */
  marker: string | undefined;
}

/** One app with its own `watched` job, the runs it made, and a session to tamper with its tree. */
interface Fixture {
  app: TestingModule;
  zk: ZookeeperRegistryCenter;
  instanceId: string;
  runs: Run[];
  /** Resolves once each item has run `firings` more times after `since`; returns those runs. */
  runsAfter(since: number, firings?: number): Promise<Run[]>;
}

const release: Array<() => Promise<unknown>> = [];

async function boot(namespace: string): Promise<Fixture> {
  const runs: Run[] = [];
  const zk = await startRegistry({ namespace });
  release.push(() => zk.close());

  @Injectable()
  class WatchedJob {
    @ShardedJob({
      jobName: 'watched',
      cron: '* * * * * *',
      shardingTotalCount: 2,
      shardingItemParameters: '0=a,1=b',
      jobParameter: 'first',
    })
    async run(context: ShardingContext): Promise<void> {
      const marker = await zk.getData(`/watched/sharding/${context.shardingItem}/running`);
      runs.push({
        item: context.shardingItem,
        at: Date.now(),
        parameter: context.shardingParameter,
        jobParameter: context.jobParameter,
        marker: marker?.data.toString('utf8'),
      });
    }
  }

  const app = await bootApp(appOptions(namespace), [WatchedJob]);
  release.push(() => app.close());
  const instanceId = app.get(ElasticJobRegistry).getJobStatus('watched').instanceId;
  await eventually(
    () => runs.length,
    (n) => n >= 2,
    10_000,
    'the first firing',
  );
  const runsAfter = async (since: number, firings = 2): Promise<Run[]> => {
    const after = (): Run[] => runs.filter((run) => run.at > since);
    await eventually(
      after,
      (list) => [0, 1].every((item) => list.filter((run) => run.item === item).length >= firings),
      10_000,
      `${firings} more firings of both items`,
    );
    return after();
  };
  return { app, zk, instanceId, runs, runsAfter };
}

// Spied once for the file (the cases run at once); each case reads the lines naming its own namespace.
const errors = vi.spyOn(Logger.prototype, 'error');
const warnings = vi.spyOn(Logger.prototype, 'warn');
const errorLogs = (namespace: string): string[] =>
  errors.mock.calls.map((call) => String(call[0])).filter((log) => log.includes(`/${namespace}/`));
const warnLogs = (namespace: string): string[] =>
  warnings.mock.calls.map((call) => String(call[0])).filter((log) => log.includes(`/${namespace}/`));

afterAll(async () => {
  while (release.length) await release.pop()!();
  vi.restoreAllMocks();
});

describe.concurrent('a config node that is not a valid configuration', () => {
  const garbage: Array<[string, (stored: string) => string, string]> = [
    [
      'YAML with a syntax error (the parser used to return fragments)',
      (stored) => stored.replace('monitorExecution: true', 'monitorExecution: [true'),
      'config',
    ],
    [
      'a field of the wrong type',
      (stored) => stored.replace('shardingTotalCount: 2', 'shardingTotalCount: many'),
      'shardingTotalCount',
    ],
    ['a cron that does not parse', (stored) => stored.replace(/cron: .*/, "cron: 'every second'"), 'cron'],
    [
      'shardingTotalCount 0',
      (stored) => stored.replace('shardingTotalCount: 2', 'shardingTotalCount: 0'),
      'shardingTotalCount',
    ],
    [
      'parameters for an item beyond the count',
      (stored) => stored.replace('0=a,1=b', '0=a,1=b,7=z'),
      'shardingItemParameters',
    ],
    [
      'an unknown sharding strategy',
      (stored) => `${stored.trimEnd()}\njobShardingStrategyType: NO_SUCH_STRATEGY\n`, // the default is not written
      'jobShardingStrategyType',
    ],
    ['no cron at all', (stored) => stored.replace(/cron: .*\n/, ''), 'cron'],
    ['a YAML list instead of a map', () => '- cron\n- shardingTotalCount\n', 'config'],
    // YAML that parses but cannot become data (the reader threw past the refusal, out of every firing):
    ['an alias to no anchor', (stored) => stored.replace(/cron: .*/, 'cron: *nowhere'), 'config'],
    [
      'a self-referencing anchor',
      (stored) => stored.replace('shardingTotalCount: 2', 'shardingTotalCount: &n [*n]'),
      'shardingTotalCount',
    ],
  ];

  it.each(garbage)(
    '%s is refused whole with an error naming the node and the field; the last good config stays',
    async (_, corrupt, field) => {
      const namespace = uniqueNamespace('garbage');
      const { zk, instanceId, runs, runsAfter } = await boot(namespace);
      const stored = (await zk.getData('/watched/config'))!.data.toString('utf8');
      const written = Date.now();
      await zk.setData('/watched/config', Buffer.from(corrupt(stored)));
      const node = `/${namespace}/watched/config`;
      await eventually(
        () => errorLogs(namespace),
        (logs) => logs.some((log) => log.includes(`refusing the config node ${node}`)),
        10_000,
        'the refusal',
      );
      const refusal = errorLogs(namespace).find((log) => log.includes(node))!;
      expect(refusal).toContain(field === 'config' ? node : `'${field}'`); // a field's refusal names the field
      // Every item still runs every second, monitored (running marker), with its parameter and the job parameter.
      for (const run of await runsAfter(written, 3)) {
        expect(run).toMatchObject({ parameter: ['a', 'b'][run.item], jobParameter: 'first', marker: instanceId });
      }
      expect(errorLogs(namespace)).toHaveLength(1); // once per write, not once per firing
      // A valid write is adopted again.
      await zk.setData('/watched/config', Buffer.from(stored.replace('jobParameter: first', 'jobParameter: second')));
      await eventually(
        () => runs.at(-1)?.jobParameter,
        (value) => value === 'second',
        10_000,
        'the valid config',
      );
    },
  );
});

describe.concurrent('values other tools write', () => {
  it('a server value other than DISABLED is read as enabled, as ElasticJob reads it, with a warning naming the node', async () => {
    const namespace = uniqueNamespace('server-value');
    const { zk, runsAfter } = await boot(namespace);
    const [ip] = (await zk.getChildren('/watched/servers'))!;
    const written = Date.now();
    await zk.setData(`/watched/servers/${ip}`, Buffer.from('WHATEVER'));
    await runsAfter(written, 3);
    expect(
      warnLogs(namespace).some((log) => log.includes(`/${namespace}/watched/servers/${ip} holds 'WHATEVER'`)),
    ).toBe(true);
    // '' is how ElasticJob 2.x wrote "enabled".
    const blank = Date.now();
    await zk.setData(`/watched/servers/${ip}`, Buffer.from(''));
    await runsAfter(blank, 3);
  });

  it('a running marker with empty data (zkCli, ElasticJob before 3.0.2) is taken over, with a warning naming it', async () => {
    const namespace = uniqueNamespace('empty-marker');
    const { zk, instanceId, runsAfter } = await boot(namespace);
    // Between two firings the marker is absent: create the empty one then.
    await eventually(
      () =>
        zk.create('/watched/sharding/0/running', Buffer.alloc(0)).then(
          () => true,
          () => false,
        ),
      (created) => created,
      10_000,
      'an empty running marker written between firings',
    );
    const written = Date.now();
    for (const run of await runsAfter(written, 3)) expect(run.marker).toBe(instanceId);
    expect(
      warnLogs(namespace).some((log) =>
        log.includes(`/${namespace}/watched/sharding/0/running names no instance ('')`),
      ),
    ).toBe(true);
  });

  it.each([
    ['an instance that is not live', 'nobody@-@1'],
    ['garbage', ''],
  ])(
    'an item assigned to %s is resharded by the leader at the next firing, with a warning naming the node',
    async (_, owner) => {
      const namespace = uniqueNamespace('stray-item');
      const { zk, app, instanceId, runsAfter } = await boot(namespace);
      await zk.setData('/watched/sharding/1/instance', Buffer.from(owner));
      const written = Date.now();
      await runsAfter(written, 2);
      expect(app.get(ElasticJobRegistry).getJobStatus('watched').shardingItems).toEqual([0, 1]);
      expect((await zk.getData('/watched/sharding/1/instance'))?.data.toString()).toBe(instanceId);
      expect(
        warnLogs(namespace).some((log) => log.includes(`/${namespace}/watched/sharding/1/instance = '${owner}'`)),
      ).toBe(true);
    },
  );
});
