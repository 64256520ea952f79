import { Injectable, Logger } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ElasticJobRegistry, ShardedJob, type JobErrorHandler, type ShardingContext } from '../../lib/index.js';
import type { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import { appOptions, bootApp } from '../support/app.js';
import { betweenFirings, jobEvents } from '../support/jobs.js';
import { hold, observer, proxyTo, releaseAll } from '../support/resources.js';
import { eventually, killSession, uniqueNamespace } from '../support/zk.js';

afterEach(async () => {
  await releaseAll();
  vi.restoreAllMocks();
});

async function boot(
  namespace: string,
  providers: Array<new (...args: never[]) => unknown>,
  overrides = {},
): Promise<TestingModule> {
  const app = await bootApp(appOptions(namespace, overrides), providers);
  hold(() => app.close());
  return app;
}

const text = async (zk: ZookeeperRegistryCenter, path: string): Promise<string | undefined> =>
  (await zk.getData(path))?.data.toString('utf8');

// ------------------------------------------------------------------ running markers and misfire

const slowRuns: Array<{ start: number; running?: string; runningOwner?: string; misfireSeen?: boolean }> = [];
let slowObserver: ZookeeperRegistryCenter | undefined;
let releaseFirstRun: (() => void) | undefined;
let firstRunStarted: ((at: number) => void) | undefined;

/** The slow job, on a cron made when the test runs (not when the file is collected, which may be seconds earlier). */
function slowJobOn(cron: string) {
  @Injectable()
  class SlowJob {
    @ShardedJob({ jobName: 'slow', cron, shardingTotalCount: 1 })
    async run(): Promise<void> {
      const start = Date.now();
      if (slowRuns.length === 0) {
        const node = await slowObserver?.getData('/slow/sharding/0/running');
        slowRuns.push({ start, running: node?.data.toString(), runningOwner: node?.stat.ephemeralOwner });
        firstRunStarted?.(start);
        // Held until every remaining instant has fired and found the item still running.
        await new Promise<void>((resolve) => (releaseFirstRun = resolve));
        slowRuns[0]!.misfireSeen = (await slowObserver?.exists('/slow/sharding/0/misfire')) !== undefined;
        return;
      }
      slowRuns.push({ start });
    }
  }
  return SlowJob;
}

describe('a firing', () => {
  it('writes an ephemeral running marker with the instance id, flags misfire when the item is still running, and runs it once after', async () => {
    const namespace = uniqueNamespace('misfire');
    slowRuns.length = 0;
    slowObserver = await observer(namespace);
    const started = new Promise<number>((resolve) => (firstRunStarted = resolve));
    // Five cron instants, one second apart, the first 2 to 3 s from now (the app is up by then); then nothing for
    // almost a minute.
    const firstSecond = (Math.floor(Date.now() / 1000) + 3) % 60;
    const slowSeconds = [0, 1, 2, 3, 4].map((k) => (firstSecond + k) % 60);
    const app = await boot(namespace, [slowJobOn(`${slowSeconds.join(',')} * * * * *`)]);
    const registry = app.get(ElasticJobRegistry);
    const instanceId = registry.getJobStatus('slow').instanceId;
    const skipped: string[] = [];
    const runSources: string[] = [];
    jobEvents(app, 'slow').on('firing-skipped', (event) => skipped.push(event.reason));
    jobEvents(app, 'slow').on('firing-started', (event) => runSources.push(event.source));
    const firstStart = await started;
    const remaining = slowSeconds.filter(
      (_, k) => k > slowSeconds.indexOf(new Date(firstStart).getUTCSeconds()),
    ).length;
    expect(remaining).toBeGreaterThan(0);
    const overlapCount = (): number => skipped.filter((reason) => reason === 'previous-firing-running').length;
    await eventually(overlapCount, (n) => n === remaining, 15_000, `${remaining} firings overlapping the slow run`);
    const misfire = await slowObserver.getData('/slow/sharding/0/misfire');
    expect(misfire?.stat.ephemeralOwner).toBe('0000000000000000'); // persistent and empty (docs/SPEC.md §2)
    expect(misfire?.data.toString()).toBe('');
    releaseFirstRun?.();
    // Several missed firings collapse into one catch-up run, right after; then the firing is over.
    await eventually(
      () => [slowRuns.length, registry.getJobStatus('slow').firing] as const,
      ([n, firing]) => n >= 2 && !firing,
      10_000,
      'the catch-up run',
    );
    expect(slowRuns).toHaveLength(2);
    expect(runSources).toEqual(['CRON', 'CATCH_UP']); // the second run is the misfire catch-up, not a cron firing
    expect(slowRuns[0]!.running).toBe(instanceId);
    expect(slowRuns[0]!.runningOwner).not.toBe('0000000000000000'); // ephemeral: failover is off
    expect(slowRuns[0]!.misfireSeen).toBe(true);
    expect(await slowObserver.exists('/slow/sharding/0/misfire')).toBeUndefined();
    expect(await slowObserver.exists('/slow/sharding/0/running')).toBeUndefined();
    slowObserver = undefined;
  });
});

// ------------------------------------------------------------------ concurrency and parameters

let inFlight = 0;
let maxInFlight = 0;
@Injectable()
class ConcurrentJob {
  @ShardedJob({ jobName: 'concurrent', cron: '* * * * * *', shardingTotalCount: 4, monitorExecution: false })
  async run(): Promise<void> {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((r) => setTimeout(r, 300));
    inFlight--;
  }
}

describe('items of one firing', () => {
  it('run concurrently', async () => {
    maxInFlight = 0;
    await boot(uniqueNamespace('concurrent'), [ConcurrentJob]);
    await eventually(
      () => maxInFlight,
      (n) => n === 4,
      10_000,
      'four items in flight at once',
    );
  });
});

// ------------------------------------------------------------------ error handlers

const handled: Array<{ jobName: string; message: string; item: number }> = [];
let throwingCalls = 0;
const recordingHandler: JobErrorHandler = {
  type: 'RECORDING',
  handleException: (jobName, error, context) => {
    handled.push({ jobName, message: (error as Error).message, item: context.shardingItem });
    throw new Error('the handler itself failed');
  },
};

@Injectable()
class FailingJobs {
  @ShardedJob({
    jobName: 'fails-custom',
    cron: '* * * * * *',
    shardingTotalCount: 2,
    jobErrorHandlerType: recordingHandler,
  })
  custom(): void {
    throw new Error('boom');
  }

  @ShardedJob({ jobName: 'fails-throw', cron: '* * * * * *', shardingTotalCount: 1, jobErrorHandlerType: 'THROW' })
  thrown(): void {
    throwingCalls++;
    throw new Error('bang');
  }
}

let ignoredCalls = 0;
@Injectable()
class LoggedJobs {
  @ShardedJob({ jobName: 'fails-log', cron: '* * * * * *', shardingTotalCount: 1 })
  logged(): void {
    throw new Error('logged failure');
  }

  @ShardedJob({ jobName: 'fails-ignore', cron: '* * * * * *', shardingTotalCount: 1, jobErrorHandlerType: 'IGNORE' })
  ignored(): void {
    ignoredCalls++;
    throw new Error('ignored failure');
  }
}

describe('error handlers', () => {
  it('call a custom handler per failed item; a handler or THROW that throws never stops the job or the app', async () => {
    handled.length = 0;
    throwingCalls = 0;
    const namespace = uniqueNamespace('errors');
    const errors = vi.spyOn(Logger.prototype, 'error');
    await boot(namespace, [FailingJobs]);
    await eventually(
      () => handled.filter((h) => h.item === 1).length,
      (n) => n >= 2,
      10_000,
      'two firings of item 1 handled',
    );
    expect(handled[0]).toMatchObject({ jobName: 'fails-custom', message: 'boom' });
    await eventually(
      () => throwingCalls,
      (n) => n >= 2,
      10_000,
      'THROW job firing again',
    );
    const messages = errors.mock.calls.map((call) => String(call[0]));
    expect(
      messages.some(
        (m) => m.includes('firing failed') && m.includes("Job 'fails-throw': sharding item 0 failed: bang"),
      ),
    ).toBe(true);
    expect(messages.some((m) => m.includes('the handler itself failed'))).toBe(true);
  });

  it('LOG logs the error with the job name; IGNORE stays silent', async () => {
    ignoredCalls = 0;
    const errors = vi.spyOn(Logger.prototype, 'error');
    const app = await boot(uniqueNamespace('log'), [LoggedJobs]);
    await eventually(
      () => errors.mock.calls.map((c) => String(c[0])),
      (m) => m.some((x) => x.includes("Job 'fails-log' item 0 failed: Error: logged failure")),
      10_000,
      'LOG output',
    );
    // The IGNORE job has failed, and the firing it failed in has ended (whatever it logs is logged by then).
    await eventually(
      () => ignoredCalls,
      (n) => n >= 1,
      10_000,
      'the IGNORE job failing',
    );
    await betweenFirings(app, 'fails-ignore');
    expect(errors.mock.calls.map((c) => String(c[0])).some((m) => m.includes('ignored failure'))).toBe(false);
  });
});

// ------------------------------------------------------------------ signal at shutdown

let signalAborted: boolean | undefined;
let signalStarted = false;
@Injectable()
class StubbornJob {
  @ShardedJob({ jobName: 'stubborn', cron: '* * * * * *', shardingTotalCount: 1 })
  async run(context: ShardingContext): Promise<void> {
    signalStarted = true;
    await new Promise<void>((resolve) => context.signal.addEventListener('abort', () => resolve(), { once: true }));
    signalAborted = context.signal.aborted;
  }
}

describe('shutdown', () => {
  it('waits for running items up to shutdownTimeoutMilliseconds, then aborts their signal and still deregisters', async () => {
    signalAborted = undefined;
    signalStarted = false;
    const namespace = uniqueNamespace('stubborn');
    const zk = await observer(namespace);
    const app = await bootApp(appOptions(namespace, { shutdownTimeoutMilliseconds: 800 }), [StubbornJob]);
    const instanceId = app.get(ElasticJobRegistry).getJobStatus('stubborn').instanceId;
    await eventually(
      () => signalStarted,
      (s) => s,
      10_000,
      'the item to start',
    );
    const started = Date.now();
    await app.close();
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    expect(signalAborted).toBe(true);
    expect(await zk.exists(`/stubborn/instances/${instanceId}`)).toBeUndefined();
    expect(await zk.exists('/stubborn/sharding/0/running')).toBeUndefined();
  });
});

// ------------------------------------------------------------------ cluster changes seen by the leader

const shardingRuns: number[] = [];
@Injectable()
class ReshardJob {
  @ShardedJob({ jobName: 'reshard', cron: '* * * * * *', shardingTotalCount: 4 })
  run(context: ShardingContext): void {
    shardingRuns.push(context.shardingItem);
  }
}

describe('cluster changes', () => {
  it('reshards when an instance joins or leaves, re-elects when the leader node disappears', async () => {
    const namespace = uniqueNamespace('reshard');
    const zk = await observer(namespace);
    const app = await boot(namespace, [ReshardJob]);
    const registry = app.get(ElasticJobRegistry);
    const me = registry.getJobStatus('reshard').instanceId;
    await eventually(
      () => registry.getJobStatus('reshard').shardingItems,
      (items) => items.length === 4,
      10_000,
      'all items mine',
    );

    // A peer joins (a live ephemeral instance node of another IP, as a Java instance would write it).
    const peer = '10.9.9.9@-@4242';
    await zk.persist('/reshard/servers/10.9.9.9', Buffer.from('ENABLED'));
    await zk.createWithParents(
      `/reshard/instances/${peer}`,
      Buffer.from(`jobInstanceId: ${peer}\nserverIp: 10.9.9.9\n`),
      'EPHEMERAL',
    );
    await eventually(
      () => registry.getJobStatus('reshard').shardingItems.length,
      (n) => n === 2,
      10_000,
      'half the items after the peer joined',
    );
    const peerItems = [];
    for (const item of [0, 1, 2, 3])
      if ((await text(zk, `/reshard/sharding/${item}/instance`)) === peer) peerItems.push(item);
    expect(peerItems).toHaveLength(2);

    // The peer leaves: everything comes back.
    await zk.remove(`/reshard/instances/${peer}`);
    await eventually(
      () => registry.getJobStatus('reshard').shardingItems,
      (items) => items.length === 4,
      10_000,
      'all items back',
    );

    // The leader node vanishes (an operator, or a crashed leader's session): a new election takes place.
    expect(await text(zk, '/reshard/leader/election/instance')).toBe(me);
    await zk.remove('/reshard/leader/election/instance');
    await eventually(
      () => text(zk, '/reshard/leader/election/instance'),
      (id) => id === me,
      10_000,
      're-election',
    );
  });

  it("adopts the configuration stored in ZooKeeper when overwrite is false (operators' changes win)", async () => {
    const namespace = uniqueNamespace('adopt');
    const zk = await observer(namespace);
    await zk.createWithParents('/reshard', Buffer.from('ReshardJob.run'), 'PERSISTENT');
    await zk.create(
      '/reshard/config',
      Buffer.from(
        'cron: 0/1 * * * * ?\njobName: reshard\nmonitorExecution: true\nshardingItemParameters: ' +
          '0=x\nshardingTotalCount: 2\n',
      ),
    );
    shardingRuns.length = 0;
    const app = await boot(namespace, [ReshardJob]);
    await eventually(
      () => app.get(ElasticJobRegistry).getJobStatus('reshard').shardingItems,
      (items) => items.length === 2,
      10_000,
      'two items',
    );
    await eventually(
      () => shardingRuns.length,
      (n) => n >= 4,
      10_000,
      'runs',
    );
    expect(new Set(shardingRuns)).toEqual(new Set([0, 1]));
    expect(await text(zk, '/reshard/config')).toContain('shardingTotalCount: 2');
  });
});

// ------------------------------------------------------------------ session expiry

let expiryRuns = 0;
@Injectable()
class ExpiryJob {
  @ShardedJob({ jobName: 'expiry', cron: '* * * * * *', shardingTotalCount: 2 })
  run(): void {
    expiryRuns++;
  }
}

describe('session expiry', () => {
  it('re-registers the instance and leader on a new session and keeps firing, without shutting the job down', async () => {
    const proxy = await proxyTo();
    const namespace = uniqueNamespace('expiry');
    const zk = await observer(namespace);
    const app = await boot(namespace, [ExpiryJob], {
      zookeeper: { serverLists: proxy.connectString, namespace, sessionTimeoutMilliseconds: 4000 },
    });
    const registry = app.get(ElasticJobRegistry);
    const me = registry.getJobStatus('expiry').instanceId;
    await eventually(
      () => expiryRuns,
      (n) => n >= 2,
      10_000,
      'runs before expiry',
    );
    const before = (await zk.getData(`/expiry/instances/${me}`))!.stat.ephemeralOwner;
    const { registryCenter } = (
      app as unknown as { get: (t: unknown) => { registryCenter: ZookeeperRegistryCenter } }
    ).get((await import('../../lib/elastic-job.orchestrator.js')).ElasticJobOrchestrator);
    const credentials = registryCenter.getSessionCredentials()!;
    proxy.cut();
    await killSession(credentials);
    await eventually(
      () => zk.exists(`/expiry/instances/${me}`),
      (s) => s === undefined,
      10_000,
      'instance node gone with the session',
    );
    proxy.restore();
    const after = await eventually(
      () => zk.getData(`/expiry/instances/${me}`),
      (d) => d !== undefined,
      20_000,
      'instance node back',
    );
    expect(after!.stat.ephemeralOwner).not.toBe(before);
    await eventually(
      () => text(zk, '/expiry/leader/election/instance'),
      (id) => id === me,
      10_000,
      'leader again',
    );
    const runsAfter = expiryRuns;
    await eventually(
      () => expiryRuns,
      (n) => n >= runsAfter + 2,
      10_000,
      'firing again',
    );
    expect(registry.getJobStatus('expiry').registered).toBe(true);
  });
});

// ------------------------------------------------------------------ manual trigger

const triggeredRuns: number[] = [];
let holdTriggered: Promise<void> | undefined;
@Injectable()
class TriggeredJob {
  @ShardedJob({ jobName: 'triggered', cron: '0 0 0 1 1 *', shardingTotalCount: 2 }) // once a year: only triggers fire it
  async run(context: ShardingContext): Promise<void> {
    triggeredRuns.push(context.shardingItem);
    await holdTriggered;
  }
}

describe('manual trigger', () => {
  it('fires every item now through trigger/{instanceId}, consumes the node, and queues a trigger that arrives mid-firing once', async () => {
    triggeredRuns.length = 0;
    const namespace = uniqueNamespace('trigger');
    const zk = await observer(namespace);
    const app = await boot(namespace, [TriggeredJob]);
    const registry = app.get(ElasticJobRegistry);
    const me = registry.getJobStatus('triggered').instanceId;
    let release!: () => void;
    holdTriggered = new Promise<void>((resolve) => (release = resolve));
    expect(await registry.trigger('triggered')).toBe(1);
    await eventually(
      () => triggeredRuns.length,
      (n) => n === 2,
      10_000,
      'both items triggered',
    );
    await eventually(
      () => zk.exists(`/triggered/trigger/${me}`),
      (s) => s === undefined,
      10_000,
      'trigger node consumed',
    );
    // Two more triggers while the firing holds: queued once, not dropped, not doubled.
    await registry.trigger('triggered');
    await eventually(
      () => zk.exists(`/triggered/trigger/${me}`),
      (s) => s === undefined,
      10_000,
      'second trigger consumed',
    );
    await registry.trigger('triggered');
    await eventually(
      () => zk.exists(`/triggered/trigger/${me}`),
      (s) => s === undefined,
      10_000,
      'third trigger consumed',
    );
    holdTriggered = undefined;
    release();
    await eventually(
      () => [triggeredRuns.length, registry.getJobStatus('triggered').firing] as const,
      ([n, f]) => n >= 4 && !f,
      10_000,
      'the queued run',
    );
    expect(triggeredRuns.sort()).toEqual([0, 0, 1, 1]);
  });
});

// ------------------------------------------------------------------ stale markers of our own

const ownRuns: Array<{ item: number; ip: string }> = [];
@Injectable()
class OwnMarkerJob {
  @ShardedJob({ jobName: 'own-marker', cron: '* * * * * *', shardingTotalCount: 2 })
  run(context: ShardingContext): void {
    ownRuns.push({ item: context.shardingItem, ip: context.taskId.split('@-@').at(-2)! });
  }
}

describe('a running marker of our own that outlived its run', () => {
  it('(its removal failed on a connection loss) is removed at our next firing, so the peer that now owns the item runs it', async () => {
    // Two apps in one process, told apart by instance.ip. A's stale marker on an item of B's names a live
    // instance (A), so B must leave the item alone until A, which knows the item is not running here, removes it.
    ownRuns.length = 0;
    const namespace = uniqueNamespace('own-marker');
    const zk = await observer(namespace);
    const a = await boot(namespace, [OwnMarkerJob], { instance: { ip: '127.0.0.31' } });
    const b = await boot(namespace, [OwnMarkerJob], { instance: { ip: '127.0.0.32' } });
    const status = (app: TestingModule) => app.get(ElasticJobRegistry).getJobStatus('own-marker');
    await eventually(
      () => [status(a).shardingItems.length, status(b).shardingItems.length],
      ([x, y]) => x === 1 && y === 1,
      15_000,
      'one item each',
    );
    const bItem = status(b).shardingItems[0]!;
    const aId = status(a).instanceId;
    // Leave a marker of A's on B's item between two firings, as a removal that failed on A would.
    await eventually(
      () =>
        zk.createWithParents(`/own-marker/sharding/${bItem}/running`, Buffer.from(aId), 'PERSISTENT').then(
          () => true,
          () => false,
        ),
      (created) => created,
      10_000,
      'a stale marker of A in place',
    );
    // A learns whose marker it is as its leader reshards (it reads every marker then; peers' markers are
    // otherwise cached unread), as it would know a marker it had written itself.
    expect(status(a).isLeader).toBe(true);
    await zk.createWithParents('/own-marker/leader/sharding/necessary', Buffer.alloc(0), 'PERSISTENT');
    const placed = ownRuns.length;
    await eventually(
      () => ownRuns.slice(placed).filter((run) => run.item === bItem && run.ip === '127.0.0.32').length,
      (n) => n >= 2,
      10_000,
      'B running its item again',
    );
    expect((await zk.getData(`/own-marker/sharding/${bItem}/running`))?.data.toString()).not.toBe(aId);
  });
});
