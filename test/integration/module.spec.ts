import 'reflect-metadata';
import { Injectable, Logger, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import {
  ElasticJobModule,
  ElasticJobRegistry,
  JobConfigurationError,
  JobConflictError,
  ShardedJob,
  type ShardingContext,
} from '../../lib/index.js';
import type { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import { eventually, rootChildren, startRegistry, uniqueNamespace, zkConnect } from '../support/zk.js';

const closers: Array<() => Promise<unknown>> = [];

/** A session on ZooKeeper's own `/zookeeper` (which always exists, so starting it writes nothing). */
async function reservedNamespace(): Promise<ZookeeperRegistryCenter> {
  const zk = await startRegistry({ namespace: 'zookeeper' });
  closers.push(() => zk.close());
  return zk;
}
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

function zkOptions(namespace: string) {
  return {
    zookeeper: { serverLists: zkConnect(), namespace, sessionTimeoutMilliseconds: 4000 },
    shutdownTimeoutMilliseconds: 5000,
  };
}

async function boot(namespace: string, providers: Array<new (...args: never[]) => unknown>) {
  @Module({ imports: [ElasticJobModule.forRoot(zkOptions(namespace))], providers })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  await moduleRef.init();
  closers.push(() => moduleRef.close());
  return moduleRef;
}

/**
 * An app whose ZooKeeper is behind a proxy that refuses connections: its bootstrap finds ZooKeeper unreachable.
 * `proxy.restore()` lets it connect.
 */
async function bootBehindCutProxy(
  namespace: string,
  providers: Array<new (...args: never[]) => unknown>,
  zookeeper: { maxRetries?: number } = {},
) {
  const { TcpProxy } = await import('../../tools/zookeeper/tcp-proxy.js');
  const [host, port] = zkConnect().split(',')[0]!.split(':');
  const proxy = new TcpProxy(Number(port), host);
  await proxy.start();
  closers.push(() => proxy.stop());
  proxy.cut();
  @Module({
    imports: [
      ElasticJobModule.forRoot({
        zookeeper: {
          serverLists: proxy.connectString,
          namespace,
          sessionTimeoutMilliseconds: 4000,
          connectionTimeoutMilliseconds: 500,
          ...zookeeper,
        },
      }),
    ],
    providers,
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  await moduleRef.init(); // does not throw: ZooKeeper trouble never stops the app
  closers.push(() => moduleRef.close());
  return { proxy, moduleRef };
}

const calls: ShardingContext[] = [];

@Injectable()
class EverySecondJobs {
  @ShardedJob({
    jobName: 'every-second',
    cron: '* * * * * *',
    shardingTotalCount: 3,
    shardingItemParameters: '0=zero,1=one,2=two',
    jobParameter: 'p',
  })
  run(context: ShardingContext): void {
    calls.push(context);
  }
}

describe('ElasticJobModule in one process against a real ZooKeeper', () => {
  it('sets a new job up in one transaction, from its cache, reading almost nothing; a restart rewrites nothing', async () => {
    @Injectable()
    class QuietJob {
      @ShardedJob({ jobName: 'quiet', cron: '0 0 0 1 1 *', shardingTotalCount: 2, overwrite: true })
      run(): void {}
    }
    const namespace = uniqueNamespace('setup');
    const first = await boot(namespace, [QuietJob]);
    const stats = first.get(ElasticJobRegistry).getZookeeperStats();
    // The conflict check, the cache's first look at the (missing) root, the latch listing: nothing else.
    expect(stats.reads).toBeLessThanOrEqual(4);
    const zk = await startRegistry({ namespace });
    closers.push(() => zk.close());
    // The directories: there, and persistent (docs/SPEC.md §2).
    for (const path of [
      '/quiet/config',
      '/quiet/servers',
      '/quiet/instances',
      '/quiet/sharding',
      '/quiet/leader/election',
      '/quiet/leader/failover/items',
      '/quiet/trigger',
    ]) {
      expect((await zk.exists(path))?.ephemeralOwner, path).toBe('0000000000000000');
    }
    expect(parse((await zk.getData('/quiet/config'))!.data.toString())).toMatchObject({
      jobName: 'quiet',
      cron: '0 0 0 1 1 ?', // Quartz's dialect, as Java instances read it
      shardingTotalCount: 2,
      overwrite: true,
    });
    expect((await zk.getData('/quiet'))?.data.toString()).toBe('QuietJob.run');
    await first.close();
    await boot(namespace, [QuietJob]);
    // Same configuration, overwrite on: the config, root and server nodes are left as they are.
    expect((await zk.exists('/quiet/config'))?.version).toBe(0);
    expect((await zk.exists('/quiet'))?.version).toBe(0);
    const servers = (await zk.getChildren('/quiet/servers')) ?? [];
    expect((await zk.exists(`/quiet/servers/${servers[0]}`))?.version).toBe(0);
  });

  it('refuses a second forRoot() in one app before anything is written (two sessions, one instance id)', async () => {
    const namespace = uniqueNamespace('twice');
    @Module({ imports: [ElasticJobModule.forRoot(zkOptions(namespace))] })
    class ReportsModule {}
    @Module({ imports: [ElasticJobModule.forRoot(zkOptions(namespace)), ReportsModule], providers: [EverySecondJobs] })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    closers.push(() => moduleRef.close());
    await expect(moduleRef.init()).rejects.toThrow(JobConfigurationError);
    await expect(moduleRef.init()).rejects.toThrow(/imported with forRoot\(\)\/forRootAsync\(\) 2 times/);
    expect(await rootChildren()).not.toContain(namespace);
  });

  it('registers the ElasticJob layout and runs every item once per firing with its parameter', async () => {
    const namespace = uniqueNamespace('module');
    calls.length = 0;
    const app = await boot(namespace, [EverySecondJobs]);
    const registry = app.get(ElasticJobRegistry);
    expect(registry.getJobNames()).toEqual(['every-second']);
    await eventually(
      () => new Set(calls.map((c) => c.shardingItem)).size,
      (n) => n === 3,
      10_000,
      'all three items to run',
    );
    const status = registry.getJobStatus('every-second');
    expect(status.isLeader).toBe(true);
    expect(status.shardingItems).toEqual([0, 1, 2]);
    const byItem = new Map(calls.map((c) => [c.shardingItem, c]));
    expect(byItem.get(0)).toMatchObject({
      jobName: 'every-second',
      shardingParameter: 'zero',
      jobParameter: 'p',
      shardingTotalCount: 3,
    });
    expect(byItem.get(2)?.shardingParameter).toBe('two');
    expect(byItem.get(0)?.taskId).toBe(`every-second@-@0,1,2@-@READY@-@${status.instanceId}`);
    expect(byItem.get(0)?.signal).toBeInstanceOf(AbortSignal);

    const zk = await startRegistry({ namespace });
    closers.push(() => zk.close());
    const text = async (path: string) => (await zk.getData(path))?.data.toString('utf8');
    const ip = status.instanceId.split('@-@')[0]!;
    expect(await text('/every-second')).toBe('EverySecondJobs.run');
    expect(await text('/every-second/config')).toContain('shardingTotalCount: 3');
    expect(await text(`/every-second/servers/${ip}`)).toBe('ENABLED');
    expect(await text(`/every-second/instances/${status.instanceId}`)).toBe(
      `jobInstanceId: ${status.instanceId}\nserverIp: ${ip}\n`,
    );
    expect((await zk.getData(`/every-second/instances/${status.instanceId}`))?.stat.ephemeralOwner).not.toBe(
      '0000000000000000',
    );
    expect(await text('/every-second/leader/election/instance')).toBe(status.instanceId);
    for (const item of [0, 1, 2]) expect(await text(`/every-second/sharding/${item}/instance`)).toBe(status.instanceId);
    expect(await zk.exists('/every-second/leader/sharding/necessary')).toBeUndefined();

    await app.close();
    // Its closer goes (the app's, pushed by boot() before the registry's): the registry's stays for afterEach. A pop()
    // here dropped the registry's instead, and its session outlived the file in the worker.
    closers.splice(closers.length - 2, 1);
    // Graceful shutdown removed the leader and instance nodes at once.
    expect(await zk.exists('/every-second/leader/election/instance')).toBeUndefined();
    expect(await zk.exists(`/every-second/instances/${status.instanceId}`)).toBeUndefined();
  });

  it('fails bootstrap with a typed error when another method owns the job name in ZooKeeper, writing nothing', async () => {
    const namespace = uniqueNamespace('conflict');
    const zk = await startRegistry({ namespace });
    closers.push(() => zk.close());
    await zk.createWithParents('/every-second', Buffer.from('com.example.LegacyJob'), 'PERSISTENT');
    const error = await boot(namespace, [EverySecondJobs]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobConflictError);
    expect((error as Error).message).toMatch(/every-second.*com\.example\.LegacyJob.*EverySecondJobs\.run/);
    expect(await zk.getChildren('/every-second')).toEqual([]);
  });

  it('jobClass: joins a job whose root node holds the same identity (a Java ElasticJob job), refuses it otherwise, both ways', async () => {
    const namespace = uniqueNamespace('identity');
    const zk = await startRegistry({ namespace });
    closers.push(() => zk.close());
    // The root node as a Java ElasticJob instance leaves it: the job's class name.
    await zk.createWithParents('/report', Buffer.from('com.acme.ReportJob'), 'PERSISTENT');
    @Injectable()
    class SharedReport {
      @ShardedJob({ jobName: 'report', cron: '0 0 0 1 1 *', shardingTotalCount: 1, jobClass: 'com.acme.ReportJob' })
      run(): void {}
    }
    @Injectable()
    class OtherReport {
      @ShardedJob({ jobName: 'report', cron: '0 0 0 1 1 *', shardingTotalCount: 1 })
      run(): void {}
    }
    // Our instance of the Java job's identity joins it, and leaves the identity as it was.
    const app = await boot(namespace, [SharedReport]);
    expect(app.get(ElasticJobRegistry).getJobStatus('report').instanceId).toMatch(/@-@/);
    expect((await zk.getData('/report'))?.data.toString()).toBe('com.acme.ReportJob');
    // A job of another identity is refused, naming both, and told how to share it.
    const refused = await boot(namespace, [OtherReport]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(JobConflictError);
    expect((refused as Error).message).toMatch(/com\.acme\.ReportJob.*OtherReport\.run.*jobClass/);
    // The other way: a job we created with a jobClass is refused to an app declaring another one.
    const namespace2 = uniqueNamespace('identity');
    await boot(namespace2, [SharedReport]);
    const zk2 = await startRegistry({ namespace: namespace2 });
    closers.push(() => zk2.close());
    expect((await zk2.getData('/report'))?.data.toString()).toBe('com.acme.ReportJob');
    expect(await boot(namespace2, [OtherReport]).catch((e: unknown) => e)).toBeInstanceOf(JobConflictError);
  });

  it('fails bootstrap on a bad @ShardedJob before connecting', async () => {
    @Injectable()
    class BadJob {
      @ShardedJob({ jobName: 'bad', cron: 'nope', shardingTotalCount: 1 })
      run(): void {}
    }
    const namespace = uniqueNamespace('bad');
    const error = await boot(namespace, [BadJob]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobConfigurationError);
    expect(error).toMatchObject({ jobName: 'bad', field: 'cron' });
    const zk = await startRegistry({ namespace });
    closers.push(() => zk.close());
    expect(await zk.getChildren('/')).toEqual([]);
  });

  it('logs the next fire times: at registration, and in a warning for a Quartz-style numbered weekday', async () => {
    @Injectable()
    class TuesdayJob {
      @ShardedJob({ jobName: 'tuesday', cron: '0 0 12 ? * 2', timeZone: 'UTC', shardingTotalCount: 1 })
      run(): void {}
    }
    const lines: Array<{ level: string; message: string; context: string }> = [];
    const record =
      (level: string) =>
      (message: unknown, context?: unknown): void => {
        lines.push({ level, message: String(message), context: String(context) });
      };
    // The testing module installs its own logger at compile(); this one is given to it instead.
    @Module({ imports: [ElasticJobModule.forRoot(zkOptions(uniqueNamespace('tuesday')))], providers: [TuesdayJob] })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .setLogger({ log: record('log'), warn: record('warn'), error: record('error'), debug() {}, verbose() {} })
      .compile();
    closers.push(() => moduleRef.close());
    await moduleRef.init();
    await eventually(
      () => lines.some((line) => line.message.startsWith('registered as')),
      Boolean,
      20_000,
      'the registration log line',
    );
    const tuesdays = /Tue \d{4}-\d\d-\d\d 12:00:00, Tue \d{4}-\d\d-\d\d 12:00:00, Tue \d{4}-\d\d-\d\d 12:00:00 \(UTC\)/;
    const warning = lines.find((line) => line.level === 'warn' && line.context === 'ElasticJob:tuesday');
    expect(warning?.message).toMatch(/'0 0 12 \? \* 2' numbers day-of-week as cron-parser does/);
    expect(warning?.message).toMatch(tuesdays);
    const registered = lines.find((line) => line.message.startsWith('registered as'));
    expect(registered).toMatchObject({ level: 'log', context: 'ElasticJob:tuesday' });
    // As stored for Java instances, UTC is GMT (java-time-zone.ts): the same wall clock.
    expect(registered?.message).toMatch(new RegExp(`next firings ${tuesdays.source.replace('UTC', 'GMT')}`));
  });

  it('rejects two methods declaring the same jobName', async () => {
    @Injectable()
    class A {
      @ShardedJob({ jobName: 'twin', cron: '* * * * * *', shardingTotalCount: 1 })
      run(): void {}
    }
    @Injectable()
    class B {
      @ShardedJob({ jobName: 'twin', cron: '* * * * * *', shardingTotalCount: 1 })
      run(): void {}
    }
    const error = await boot(uniqueNamespace('twin'), [A, B]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobConfigurationError);
    expect((error as Error).message).toMatch(/Job 'twin'.*'jobName'.*declared twice, on A\.run and on B\.run/);
  });

  // Unique namespaces, so that "writing nothing" can be checked: no top-level node starts with the namespace's name.
  const badOptions: Array<[string, () => { serverLists: string; namespace: string }, string, RegExp]> = [
    [
      'a list that is not one',
      () => ({ serverLists: 'not a list', namespace: uniqueNamespace('bad-list') }),
      'zookeeper.serverLists',
      /not host:port/,
    ],
    [
      'a port beyond 65535',
      () => ({ serverLists: `${zkConnect().split(':')[0]}:99999`, namespace: uniqueNamespace('bad-port') }),
      'zookeeper.serverLists',
      /port 99999 .* outside 1\.\.65535/,
    ],
    [
      'port 0',
      () => ({ serverLists: '127.0.0.1:0', namespace: uniqueNamespace('port-0') }),
      'zookeeper.serverLists',
      /outside 1\.\.65535/,
    ],
    [
      "namespace '.'",
      () => ({ serverLists: zkConnect(), namespace: '.' }),
      'zookeeper.namespace',
      /it is a relative path segment \('\.' or '\.\.'\)/,
    ],
    [
      "namespace '..'",
      () => ({ serverLists: zkConnect(), namespace: '..' }),
      'zookeeper.namespace',
      /relative path segment/,
    ],
    [
      "namespace 'zookeeper' (ZooKeeper's own subtree)",
      () => ({ serverLists: zkConnect(), namespace: 'zookeeper' }),
      'zookeeper.namespace',
      /ZooKeeper's own subtree/,
    ],
    [
      'a namespace with a leading slash',
      () => ({ serverLists: zkConnect(), namespace: `/${uniqueNamespace('leading')}` }),
      'zookeeper.namespace',
      /starts with '\/': write it without, as 'leading-/,
    ],
    [
      'a nested namespace with an empty part',
      () => ({ serverLists: zkConnect(), namespace: `${uniqueNamespace('empty-part')}//b` }),
      'zookeeper.namespace',
      /has a part '' that is empty/,
    ],
    [
      'a namespace with whitespace around it',
      () => ({ serverLists: zkConnect(), namespace: `${uniqueNamespace('spaced')} ` }),
      'zookeeper.namespace',
      /has whitespace around it/,
    ],
    [
      'a namespace with a character ZooKeeper refuses',
      () => ({ serverLists: zkConnect(), namespace: `${uniqueNamespace('refused')}\ud800b` }),
      'zookeeper.namespace',
      /ZooKeeper refuses/,
    ],
  ];
  it.each(badOptions)(
    'rejects %s with a JobConfigurationError naming the option, writing nothing',
    async (_, zookeeper, field, message) => {
      @Injectable()
      class J {
        @ShardedJob({ jobName: 'j', cron: '* * * * * *', shardingTotalCount: 1 })
        run(): void {}
      }
      const options = zookeeper();
      @Module({ imports: [ElasticJobModule.forRoot({ zookeeper: options })], providers: [J] })
      class AppModule {}
      const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
      const error = await moduleRef.init().catch((e: unknown) => e);
      await moduleRef.close();
      expect(error).toBeInstanceOf(JobConfigurationError);
      expect(error).toMatchObject({ field });
      expect((error as Error).message).toMatch(message);
      // Nothing written: no /zookeeper/j for the reserved namespace; else no top-level node starting with the
      // namespace's (unique) name ('.' and '..' name no node).
      const name = options.namespace.replace(/^\/+/, '').split(/[/\ud800 ]/)[0]!;
      const leftovers =
        options.namespace === 'zookeeper'
          ? (await (await reservedNamespace()).exists('/j')) === undefined
            ? []
            : ['/zookeeper/j']
          : (await rootChildren()).filter((child) => name !== '.' && name !== '..' && child.startsWith(name));
      expect(leftovers).toEqual([]);
    },
  );

  it('accepts a nested namespace (a/b), as Curator and ElasticJob do: the jobs live under it', async () => {
    const parent = uniqueNamespace('nested');
    const namespace = `${parent}/billing`;
    calls.length = 0;
    await boot(namespace, [EverySecondJobs]);
    await eventually(
      () => new Set(calls.map((c) => c.shardingItem)).size,
      (items) => items === 3,
      15_000,
      'every item run under the nested namespace',
    );
    const zk = await startRegistry({ namespace: parent });
    closers.push(() => zk.close());
    expect(await zk.getChildren('/billing')).toContain('every-second');
    expect((await zk.getData('/billing/every-second'))?.data.toString()).toBe('EverySecondJobs.run');
  });

  it('accepts a chroot in serverLists', async () => {
    const namespace = uniqueNamespace('chroot');
    const root = await startRegistry({ namespace });
    closers.push(() => root.close());
    @Module({
      imports: [
        ElasticJobModule.forRoot({
          zookeeper: {
            serverLists: `${zkConnect()}/${namespace}`,
            namespace: 'zookeeper',
            sessionTimeoutMilliseconds: 4000,
          },
        }),
      ],
      providers: [EverySecondJobs],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    await moduleRef.init();
    closers.push(() => moduleRef.close());
    expect(moduleRef.get(ElasticJobRegistry).getJobStatus('every-second').registered).toBe(true);
    // Written under the chroot: the job's config, with the job's values.
    expect(parse((await root.getData('/zookeeper/every-second/config'))!.data.toString())).toMatchObject({
      jobName: 'every-second',
      cron: '* * * * * ?',
      shardingTotalCount: 3,
      shardingItemParameters: '0=zero,1=one,2=two',
      jobParameter: 'p',
    });
  });

  it('forRootAsync with useFactory and inject', async () => {
    const namespace = uniqueNamespace('async');
    const OPTIONS = 'ZK_OPTIONS';
    @Module({ providers: [{ provide: OPTIONS, useValue: zkOptions(namespace) }], exports: [OPTIONS] })
    class ConfigModule {}
    @Module({
      imports: [
        ElasticJobModule.forRootAsync({
          imports: [ConfigModule],
          inject: [OPTIONS],
          useFactory: (o: ReturnType<typeof zkOptions>) => o,
        }),
      ],
      providers: [EverySecondJobs],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    await moduleRef.init();
    closers.push(() => moduleRef.close());
    const status = moduleRef.get(ElasticJobRegistry).getJobStatus('every-second');
    expect(status.registered).toBe(true);
  });

  it('keeps the app up when ZooKeeper is unreachable, and registers once it answers', async () => {
    @Injectable()
    class J {
      @ShardedJob({ jobName: 'late', cron: '* * * * * *', shardingTotalCount: 1 })
      run(): void {}
    }
    const { proxy, moduleRef } = await bootBehindCutProxy(uniqueNamespace('late'), [J]);
    const registry = moduleRef.get(ElasticJobRegistry);
    expect(registry.getJobStatus('late').registered).toBe(false);
    proxy.restore();
    await eventually(
      () => registry.getJobStatus('late').registered,
      (r) => r,
      20_000,
      'registration after ZooKeeper came back',
    );
  });

  it('keeps the app up when the connection goes before the namespace node is made, and registers once it is back', async () => {
    @Injectable()
    class J {
      @ShardedJob({ jobName: 'cut-at-namespace', cron: '* * * * * *', shardingTotalCount: 1 })
      run(): void {}
    }
    const namespace = uniqueNamespace('cut-at-namespace');
    const { TcpProxy } = await import('../../tools/zookeeper/tcp-proxy.js');
    const { ZookeeperTransport } = await import('../../lib/registry/zookeeper-transport.js');
    const [host, port] = zkConnect().split(',')[0]!.split(':');
    const proxy = new TcpProxy(Number(port), host);
    await proxy.start();
    closers.push(() => proxy.stop());
    // Connected, then cut as the namespace's root is asked for: the request fails with CONNECTION_LOSS, which
    // threw out of the app's bootstrap before (a chaos run's instance exited with it).
    const mkdirs = ZookeeperTransport.prototype.mkdirs;
    const spy = vi.spyOn(ZookeeperTransport.prototype, 'mkdirs').mockImplementation(function (this: unknown, path) {
      if (path === '/' && spy.mock.calls.length === 1) proxy.cut();
      return mkdirs.call(this, path);
    });
    closers.push(async () => spy.mockRestore());
    @Module({
      imports: [
        ElasticJobModule.forRoot({
          zookeeper: { serverLists: proxy.connectString, namespace, sessionTimeoutMilliseconds: 4000 },
        }),
      ],
      providers: [J],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    await moduleRef.init(); // does not throw: ZooKeeper trouble never stops the app
    closers.push(() => moduleRef.close());
    const registry = moduleRef.get(ElasticJobRegistry);
    expect(registry.getJobStatus('cut-at-namespace').registered).toBe(false);
    proxy.restore();
    await eventually(
      () => registry.getJobStatus('cut-at-namespace').registered,
      (registered) => registered,
      20_000,
      'registration once the connection is back',
    );
    expect(await rootChildren()).toContain(namespace);
  });

  it('registers at the next connection when ZooKeeper went again during the late conflict check', async () => {
    @Injectable()
    class Flapping {
      @ShardedJob({ jobName: 'flapping', cron: '0 0 0 1 1 ?', shardingTotalCount: 1 })
      run(): void {}
    }
    // maxRetries 0: the check gives up at its first connection loss.
    const { proxy, moduleRef } = await bootBehindCutProxy(uniqueNamespace('flapping'), [Flapping], { maxRetries: 0 });
    const warnings = vi.spyOn(Logger.prototype, 'warn');
    closers.push(async () => warnings.mockRestore());
    // Subscribed after the app: when ZooKeeper answers, the check has just begun, and the connection goes again.
    const { ElasticJobOrchestrator } = await import('../../lib/elastic-job.orchestrator.js');
    const unsubscribe = moduleRef
      .get(ElasticJobOrchestrator)
      .registryCenter!.onStateChange((change) => change.state === 'CONNECTED' && proxy.cut());
    closers.push(async () => unsubscribe());
    proxy.restore();
    await eventually(
      () => warnings.mock.calls.some(([message]) => /registration waits for ZooKeeper again/.test(String(message))),
      (seen) => seen,
      20_000,
      'the check given up',
    );
    const registry = moduleRef.get(ElasticJobRegistry);
    expect(registry.getJobStatus('flapping').registered).toBe(false);
    proxy.restore();
    await eventually(
      () => registry.getJobStatus('flapping').registered,
      (registered) => registered,
      20_000,
      'registration at the next connection',
    );
  });

  it('refuses every job, saying why, when the conflict is found after ZooKeeper came back late', async () => {
    @Injectable()
    class LateJobs {
      @ShardedJob({ jobName: 'owned-elsewhere', cron: '* * * * * *', shardingTotalCount: 1 })
      run(): void {}
      @ShardedJob({ jobName: 'innocent', cron: '* * * * * *', shardingTotalCount: 1 })
      other(): void {}
    }
    const namespace = uniqueNamespace('late-conflict');
    const zk = await startRegistry({ namespace });
    closers.push(() => zk.close());
    await zk.createWithParents('/owned-elsewhere', Buffer.from('com.example.LegacyJob'), 'PERSISTENT');
    const { proxy, moduleRef } = await bootBehindCutProxy(namespace, [LateJobs]); // the app is up
    const registry = moduleRef.get(ElasticJobRegistry);
    proxy.restore();
    const health = (jobName: string) => registry.getJobStatus(jobName).health;
    await eventually(
      () => [health('owned-elsewhere').registration, health('innocent').registration],
      (states) => states.every((state) => state === 'failed'),
      20_000,
      'both jobs refused',
    );
    expect(health('owned-elsewhere').lastError).toMatch(/com\.example\.LegacyJob.*LateJobs\.run/);
    expect(health('innocent').lastError).toMatch(/owned-elsewhere.*conflicts/);
    expect(registry.getJobStatus('innocent').registered).toBe(false);
    // Nothing written, and the caches the check started are closed: a change in a job's tree is heard by nobody.
    expect(await zk.exists('/innocent')).toBeUndefined();
    const heard = registry.getZookeeperStats().watchEvents;
    await zk.createWithParents('/owned-elsewhere/config', Buffer.from('x'), 'PERSISTENT');
    await zk.createWithParents('/innocent/config', Buffer.from('x'), 'PERSISTENT');
    // A read on the app's own session after them: ZooKeeper answers it after any notification of theirs.
    const { ElasticJobOrchestrator } = await import('../../lib/elastic-job.orchestrator.js');
    expect(await moduleRef.get(ElasticJobOrchestrator).registryCenter?.exists('/innocent/config')).toBeDefined();
    expect(registry.getZookeeperStats().watchEvents).toBe(heard);
  });
});
