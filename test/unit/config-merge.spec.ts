import { PreparationLead } from '../../lib/schedule/preparation-lead.js';
import { JobEventPublisher } from '../../lib/job/events/job-event-publisher.js';
import { Logger } from '@nestjs/common';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type {
  JobErrorHandler,
  JobShardingStrategy,
  ShardedJobOptions,
} from '../../lib/interfaces/sharded-job-options.interface.js';
import { ConfigService } from '../../lib/job/config/config.service.js';
import { customPlugins, resolveJobConfiguration } from '../../lib/job/config/job-configuration.validator.js';
import { fromConfigYaml, toConfigYaml } from '../../lib/job/config/job-configuration.yaml.js';
import type { JobContext } from '../../lib/job/context/job-context.js';
import { JobNodePath } from '../../lib/job/paths.js';
import { JobPlugins } from '../../lib/job/plugins/job-plugins.js';
import { JobNodeStorage } from '../../lib/job/storage/job-node-storage.js';
import { resolveZookeeperSettings } from '../../lib/registry/zookeeper-settings.js';
import { FakeZookeeper, type FakeRegistryCenter } from '../support/fake-registry.js';

beforeAll(() => {
  Logger.overrideLogger(['error']);
});

describe('resolveZookeeperSettings', () => {
  const given = { serverLists: 'zk1:2181,zk2:2181', namespace: 'ns' };
  const defaults = {
    ...given,
    sessionTimeoutMilliseconds: 60_000,
    connectionTimeoutMilliseconds: 15_000,
    baseSleepTimeMilliseconds: 1_000,
    maxSleepTimeMilliseconds: 3_000,
    maxRetries: 3,
  };

  it("fills in ElasticJob's defaults", () => {
    expect(resolveZookeeperSettings(given)).toEqual(defaults);
  });

  it('gives the default to an option present as undefined (a config file with the key left empty)', () => {
    const settings = resolveZookeeperSettings({
      ...given,
      sessionTimeoutMilliseconds: undefined,
      maxRetries: undefined,
      digest: undefined,
    });
    expect(settings).toEqual(defaults);
    expect('digest' in settings).toBe(false);
  });

  it('keeps what the user gave, zero included', () => {
    expect(
      resolveZookeeperSettings({ ...given, maxRetries: 0, sessionTimeoutMilliseconds: 4_000, digest: 'u:p' }),
    ).toEqual({ ...defaults, maxRetries: 0, sessionTimeoutMilliseconds: 4_000, digest: 'u:p' });
  });
});

describe("what a @ShardedJob's options become", () => {
  const base: ShardedJobOptions = { jobName: 'orders', cron: '0/5 * * * * ?', shardingTotalCount: 3 };

  it('every field, from the fewest options', () => {
    expect(resolveJobConfiguration(base)).toEqual({
      jobName: 'orders',
      cron: '0/5 * * * * *',
      timeZone: undefined,
      shardingTotalCount: 3,
      shardingItemParameters: '',
      jobParameter: '',
      monitorExecution: true,
      failover: false,
      misfire: true,
      maxTimeDiffSeconds: -1,
      reconcileIntervalMinutes: 10,
      jobShardingStrategyType: 'AVG_ALLOCATION',
      jobErrorHandlerType: 'LOG',
      description: '',
      disabled: false,
      overwrite: false,
      staticSharding: false,
      props: {},
    });
  });

  it('an option given as undefined is an option not given', () => {
    const undefinedOptions = {
      ...base,
      monitorExecution: undefined,
      misfire: undefined,
      jobParameter: undefined,
      reconcileIntervalMinutes: undefined,
      jobErrorHandlerType: undefined,
    };
    expect(resolveJobConfiguration(undefinedOptions)).toEqual(resolveJobConfiguration(base));
  });

  it('keeps what was given, false and 0 included; custom plugins become their type names', () => {
    const strategy: JobShardingStrategy = {
      type: 'ALL_TO_FIRST',
      sharding: (instances, _job, total) =>
        new Map([[instances[0]!.jobInstanceId, Array.from({ length: total }, (_, i) => i)]]),
    };
    const errorHandler: JobErrorHandler = { type: 'COLLECT', handleException: () => undefined };
    const options: ShardedJobOptions = {
      ...base,
      timeZone: 'Asia/Tokyo',
      shardingItemParameters: { 2: 'c', 0: 'a' },
      monitorExecution: false,
      misfire: false,
      maxTimeDiffSeconds: 0,
      reconcileIntervalMinutes: 0,
      jobShardingStrategyType: strategy,
      jobErrorHandlerType: errorHandler,
    };
    expect(resolveJobConfiguration(options)).toMatchObject({
      timeZone: 'Asia/Tokyo',
      shardingItemParameters: '0=a,2=c',
      monitorExecution: false,
      misfire: false,
      maxTimeDiffSeconds: 0,
      reconcileIntervalMinutes: 0,
      jobShardingStrategyType: 'ALL_TO_FIRST',
      jobErrorHandlerType: 'COLLECT',
    });
    expect(customPlugins(options)).toEqual({ strategy, errorHandler });
  });
});

describe('the config node over the local configuration (ConfigService on the fake registry)', () => {
  const local = resolveJobConfiguration({
    jobName: 'orders',
    cron: '*/5 * * * * *',
    shardingTotalCount: 3,
    jobErrorHandlerType: 'IGNORE',
  });

  /** What the job would find in ZooKeeper: a config node another instance (or an operator) wrote. */
  const storedYaml = (edit: (yaml: string) => string): string => edit(toConfigYaml(local));

  async function startJob(
    client: FakeRegistryCenter,
    config = local,
  ): Promise<{ service: ConfigService; storage: JobNodeStorage }> {
    const paths = new JobNodePath(config.jobName);
    const logger = new Logger(`test:${config.jobName}`);
    const storage = new JobNodeStorage(client, paths, logger);
    const ctx: JobContext = {
      jobName: config.jobName,
      paths,
      storage,
      connection: client,
      logger,
      instanceId: '10.0.0.1@-@1',
      ip: '10.0.0.1',
      waitTimeoutMs: 1_000,
      plugins: new JobPlugins(logger),
      events: new JobEventPublisher(undefined, { jobName: config.jobName, instanceId: '10.0.0.1@-@1', ip: '10.0.0.1' }),
      preparationLead: new PreparationLead(),
    };
    const service = new ConfigService(ctx, config, 'Jobs.orders');
    await storage.startCache();
    await service.setUp();
    return { service, storage };
  }

  it('writes the local configuration when ZooKeeper has none', async () => {
    const zk = new FakeZookeeper();
    const { service } = await startJob(await zk.connect('ns'));
    expect(zk.get('/ns/orders/config')?.data).toBe(toConfigYaml(local));
    expect(zk.get('/ns/orders')?.data).toBe('Jobs.orders');
    expect(service.load()).toEqual(local);
  });

  it('reads its own node as the YAML says, also where YAML does not give a string back as written', async () => {
    // ' \n' is written as a block scalar that YAML reads back as '\n': what Java sees is what runs here too.
    const config = resolveJobConfiguration({
      jobName: 'orders',
      cron: '*/5 * * * * *',
      shardingTotalCount: 3,
      jobParameter: ' \n',
    });
    const zk = new FakeZookeeper();
    const { service } = await startJob(await zk.connect('ns'), config);
    expect(zk.get('/ns/orders/config')?.data).toBe(toConfigYaml(config));
    expect(service.load().jobParameter).toBe(fromConfigYaml(toConfigYaml(config)).jobParameter);
    expect(service.load().jobParameter).toBe('\n');
    // Single-line values read back as written: the node as written is adopted without parsing.
    const plain = await startJob(await new FakeZookeeper().connect('ns'));
    expect(plain.service.load()).toEqual(local);
  });

  it("adopts ZooKeeper's configuration over the local one, and leaves the node as it is", async () => {
    const zk = new FakeZookeeper();
    const operator = await zk.connect('ns');
    // A Java ElasticJob node: no misfire key (false to Java), no handler type (the local one stays).
    const yaml = storedYaml((y) =>
      y
        .replace(/^cron: .*$/m, "cron: '0 0 * * * ?'")
        .replace('shardingTotalCount: 3', 'shardingTotalCount: 5')
        .replace('failover: false', 'failover: true')
        .replace(/^misfire: .*\n/m, '')
        .replace(/^jobErrorHandlerType: .*\n/m, ''),
    );
    await operator.createWithParents('/orders/config', Buffer.from(yaml), 'PERSISTENT');
    const { service } = await startJob(await zk.connect('ns'));
    expect(service.load()).toEqual({
      ...local,
      cron: '0 0 * * * *',
      shardingTotalCount: 5,
      failover: true,
      misfire: false,
    });
    expect(zk.get('/ns/orders/config')?.data).toBe(yaml);
  });

  it('warns naming each field where the stored configuration wins, with both values; says nothing when equal', async () => {
    const warnings = vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const zk = new FakeZookeeper();
      const operator = await zk.connect('ns');
      const yaml = storedYaml((y) =>
        y.replace(/^cron: .*$/m, "cron: '0 0 * * * ?'").replace('shardingTotalCount: 3', 'shardingTotalCount: 5'),
      );
      await operator.createWithParents('/orders/config', Buffer.from(yaml), 'PERSISTENT');
      await startJob(await zk.connect('ns'));
      const drift = warnings.mock.calls.map((call) => String(call[0])).filter((line) => line.includes('differs'));
      expect(drift).toEqual([
        "the configuration stored in ZooKeeper differs from this app's and is used (overwrite: false): " +
          'cron "0 0 * * * *" (here "*/5 * * * * *"), shardingTotalCount 5 (here 3). Set overwrite: true to ' +
          "write this app's, or change the stored one (ElasticJobOperator, the CLI)",
      ]);
      warnings.mockClear();
      const same = new FakeZookeeper();
      await (
        await same.connect('ns')
      ).createWithParents('/orders/config', Buffer.from(toConfigYaml(local)), 'PERSISTENT');
      await startJob(await same.connect('ns'));
      expect(warnings.mock.calls.filter((call) => String(call[0]).includes('differs'))).toEqual([]);
    } finally {
      warnings.mockRestore();
    }
  });

  it('overwrite: true writes the local configuration over the stored one', async () => {
    const zk = new FakeZookeeper();
    const operator = await zk.connect('ns');
    await operator.createWithParents(
      '/orders/config',
      Buffer.from(storedYaml((y) => y.replace('shardingTotalCount: 3', 'shardingTotalCount: 5'))),
      'PERSISTENT',
    );
    const overwriting = { ...local, overwrite: true };
    const { service } = await startJob(await zk.connect('ns'), overwriting);
    expect(zk.get('/ns/orders/config')?.data).toBe(toConfigYaml(overwriting));
    expect(service.load()).toEqual(overwriting);
  });

  it('follows edits of the node; a bad edit is refused whole and the last good configuration stays', async () => {
    const zk = new FakeZookeeper();
    const operator = await zk.connect('ns');
    const { service, storage } = await startJob(await zk.connect('ns'));
    const edit = async (yaml: string): Promise<void> => {
      await operator.setData('/orders/config', Buffer.from(yaml));
      await zk.idle();
      await storage.cached.settled();
    };
    await edit(storedYaml((y) => y.replace('shardingTotalCount: 3', 'shardingTotalCount: 7')));
    expect(service.load().shardingTotalCount).toBe(7);
    await edit(
      storedYaml((y) =>
        y.replace('shardingTotalCount: 3', 'shardingTotalCount: 9').replace(/^cron: .*$/m, 'cron: every minute'),
      ),
    );
    expect(service.load()).toEqual({ ...local, shardingTotalCount: 7 });
    await edit('cron: [unclosed');
    expect(service.load()).toEqual({ ...local, shardingTotalCount: 7 });
    await edit(storedYaml((y) => y.replace('shardingTotalCount: 3', 'shardingTotalCount: 2')));
    expect(service.load()).toEqual({ ...local, shardingTotalCount: 2 });
  });
});
