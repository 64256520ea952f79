import { Injectable } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ElasticJobRegistry,
  JobConfigurationError,
  OnElasticJobEvent,
  ShardedJob,
  type ElasticJobEvent,
  type ElasticJobEventOf,
  type ShardingContext,
} from '../../lib/index.js';
import { appOptions, bootApp } from '../support/app.js';
import { appRegistryCenter } from '../support/jobs.js';
import { hold, observer, proxyTo, releaseAll } from '../support/resources.js';
import { eventually, killSession, uniqueNamespace } from '../support/zk.js';

/**
 * The events every instance emits (docs/guide/events-and-listeners.md, "Events"): ElasticJob's item and status events
 * with its fields, the coordination events, delivered to `@OnElasticJobEvent()` methods and to
 * `ElasticJobRegistry.events$`, never delaying a firing, whatever a subscriber does.
 */

afterEach(async () => {
  await releaseAll();
});

const YEARLY = '0 0 0 1 1 *';

@Injectable()
class ReportJobs {
  @ShardedJob({ jobName: 'reports', cron: YEARLY, shardingTotalCount: 3, shardingItemParameters: '0=eu,1=us,2=ap' })
  reports(context: ShardingContext): void {
    if (context.shardingItem === 1) throw new Error('boom in item 1');
  }

  @ShardedJob({ jobName: 'quiet', cron: YEARLY, shardingTotalCount: 1 })
  quiet(): void {}
}

let handoverRuns = 0;

@Injectable()
class HandoverJob {
  @ShardedJob({ jobName: 'handover', cron: '* * * * * *', shardingTotalCount: 1, failover: true })
  async run(context: ShardingContext): Promise<void> {
    // The first run stays until its instance loses the item (signal aborted with the session).
    if (handoverRuns++ > 0) return;
    await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
  }
}

let heard: ElasticJobEvent[] = [];
let quietOnly: ElasticJobEvent[] = [];

@Injectable()
class Subscribers {
  @OnElasticJobEvent('*')
  everything(event: ElasticJobEvent): void {
    heard.push(event);
  }

  @OnElasticJobEvent('item.completed', { jobs: ['quiet'] })
  quietCompletions(event: ElasticJobEvent): void {
    quietOnly.push(event);
  }

  @OnElasticJobEvent('item.started')
  throws(): void {
    throw new Error('a subscriber that throws');
  }

  @OnElasticJobEvent(['item.started', 'status'])
  hangs(): Promise<void> {
    return new Promise(() => undefined); // never settles
  }
}

/** What the decorated method heard from the instance registered with this IP. */
function heardFrom(ip: string): ElasticJobEvent[] {
  return heard.filter((event) => event.instanceId.startsWith(`${ip}@-@`));
}

@Injectable()
class AllEvents {
  @OnElasticJobEvent('*')
  record(event: ElasticJobEvent): void {
    heard.push(event);
  }
}

function ofType<T extends ElasticJobEvent['type']>(
  events: readonly ElasticJobEvent[],
  type: T,
  jobName: string,
): Array<ElasticJobEventOf<T>> {
  return events.filter((event): event is ElasticJobEventOf<T> => event.type === type && event.jobName === jobName);
}

async function boot(namespace: string, ip?: string, zookeeperServer?: string): Promise<TestingModule> {
  return bootWith(namespace, ip, zookeeperServer, [ReportJobs, Subscribers]);
}

async function bootWith(
  namespace: string,
  ip: string | undefined,
  zookeeperServer: string | undefined,
  providers: Array<new (...args: never[]) => unknown>,
): Promise<TestingModule> {
  const options = appOptions(namespace, ip ? { instance: { ip } } : {});
  if (zookeeperServer) options.zookeeper = { ...options.zookeeper, serverLists: zookeeperServer };
  const app = await bootApp(options, providers);
  hold(() => app.close());
  return app;
}

describe('events', () => {
  it("tells items and firings with ElasticJob's fields, to decorated methods and events$, whatever subscribers do", async () => {
    heard = [];
    quietOnly = [];
    const app = await boot(uniqueNamespace('events'));
    const registry = app.get(ElasticJobRegistry);
    const streamed: ElasticJobEvent[] = [];
    const subscription = registry.events$.subscribe((event) => streamed.push(event));
    hold(() => subscription.unsubscribe());
    const me = registry.getJobStatus('reports').instanceId;
    const ip = me.split('@-@')[0]!;

    await eventually(
      () => ofType(heard, 'leadership.gained', 'reports').length,
      (n) => n === 1,
      10_000,
      'leadership of reports',
    );
    await registry.trigger('reports');
    await eventually(
      () => ofType(heard, 'status', 'reports').map((event) => event.state),
      (states) => states.includes('TASK_ERROR'),
      15_000,
      'the triggered firing to end',
    );
    const taskId = `reports@-@0,1,2@-@READY@-@${me}`;

    // Items: one start and one completion each, sharing an id; the failure's stack as ElasticJob stores it.
    const started = ofType(heard, 'item.started', 'reports');
    const completed = ofType(heard, 'item.completed', 'reports');
    expect(started.map((event) => event.shardingItem).sort()).toEqual([0, 1, 2]);
    expect(completed.map((event) => event.shardingItem).sort()).toEqual([0, 1, 2]);
    for (const done of completed) {
      const start = started.find((event) => event.shardingItem === done.shardingItem)!;
      expect(done.id).toBe(start.id);
      expect(done).toMatchObject({
        jobName: 'reports',
        instanceId: me,
        hostname: hostname(),
        ip,
        taskId,
        source: 'NORMAL_TRIGGER',
        startTime: start.startTime,
        success: done.shardingItem !== 1,
      });
      expect(done.completeTime.getTime()).toBeGreaterThanOrEqual(done.startTime.getTime());
    }
    expect(completed.find((event) => event.shardingItem === 1)!.failureCause).toMatch(/^Error: boom in item 1\n\s+at /);
    expect(completed.find((event) => event.shardingItem === 0)!.failureCause).toBeUndefined();

    // Status: ElasticJob-Lite's sequence for a firing with a failed item.
    const statuses = ofType(heard, 'status', 'reports').filter((event) => event.taskId === taskId);
    expect(statuses.map((event) => event.state)).toEqual(['TASK_STAGING', 'TASK_RUNNING', 'TASK_ERROR']);
    expect(statuses[0]!.message).toBe("Job 'reports' execute begin.");
    expect(statuses[2]!.message).toMatch(/^\{1=Error: boom in item 1\n/);
    for (const status of statuses) {
      expect(status).toMatchObject({
        originalTaskId: '',
        slaveId: ip,
        executionType: 'READY',
        shardingItems: [0, 1, 2],
      });
    }

    // The status tells the last firing and each owned item's last completion.
    const status = await eventually(
      () => registry.getJobStatus('reports'),
      (value) => Object.keys(value.lastCompletions).length === 3,
      5_000,
      'the last completions in the status',
    );
    expect(status.lastFireTime).toBeInstanceOf(Date);
    expect(status.lastFireTime!.getTime()).toBeLessThanOrEqual(started[0]!.startTime.getTime());
    expect(status.lastCompletions).toEqual({
      0: { completeTime: completed.find((event) => event.shardingItem === 0)!.completeTime, success: true },
      1: {
        completeTime: completed.find((event) => event.shardingItem === 1)!.completeTime,
        success: false,
        failureMessage: expect.stringContaining('boom in item 1'),
      },
      2: { completeTime: completed.find((event) => event.shardingItem === 2)!.completeTime, success: true },
    });

    // Coordination: this instance leads and got every item at the first sharding.
    expect(ofType(heard, 'sharding.assigned', 'reports')).toEqual([
      expect.objectContaining({ items: [0, 1, 2], previousItems: [] }),
    ]);

    // The stream saw what the decorated method saw; the job filter kept the other job's events out.
    await eventually(
      () => streamed.filter((event) => event.type === 'item.completed').length,
      (n) => n === 3,
      5_000,
      'the stream',
    );
    expect(quietOnly).toEqual([]);
    await registry.trigger('quiet');
    await eventually(
      () => quietOnly.length,
      (n) => n === 1,
      10_000,
      "the quiet job's completion",
    );
    expect(quietOnly[0]).toMatchObject({ type: 'item.completed', jobName: 'quiet', success: true });

    // A throwing and a never-settling subscriber held nothing up: the next firing runs and is told as the first.
    await registry.trigger('reports');
    await eventually(
      () => ofType(heard, 'status', 'reports').filter((event) => event.state === 'TASK_ERROR').length,
      (n) => n === 2,
      15_000,
      'a second firing',
    );
  });

  it('tells leadership moving, items resharded, and a session lost and rejoined', async () => {
    heard = [];
    const proxy = await proxyTo();
    const namespace = uniqueNamespace('coordination');
    // events$ has no replay: what bootstrap told, only the decorated method (subscribed before it) heard.
    const firstEvents = () => heardFrom('127.0.0.2');
    const secondEvents = () => heardFrom('127.0.0.3');
    const first = await boot(namespace, '127.0.0.2', proxy.connectString);
    await eventually(
      () => ofType(firstEvents(), 'leadership.gained', 'reports').length,
      (n) => n === 1,
      10_000,
      'the first instance leads',
    );
    await first.get(ElasticJobRegistry).trigger('reports');
    await eventually(
      () => ofType(firstEvents(), 'sharding.assigned', 'reports').at(-1)?.items,
      (items) => items?.length === 3,
      10_000,
      'all items on the first instance',
    );

    const second = await boot(namespace, '127.0.0.3');
    // The leader flags a resharding when it sees the newcomer, and reshards at the next firing.
    const zk = await observer(namespace);
    await eventually(
      () => zk.exists('/reports/leader/sharding/necessary'),
      (stat) => stat !== undefined,
      10_000,
      'the resharding flag',
    );
    await second.get(ElasticJobRegistry).trigger('reports');
    const firstItems = await eventually(
      () => ofType(firstEvents(), 'sharding.assigned', 'reports').at(-1),
      (event) => event?.items.length !== 3,
      10_000,
      'the first instance giving items up',
    );
    const secondItems = await eventually(
      () => ofType(secondEvents(), 'sharding.assigned', 'reports').at(-1),
      (event) => (event?.items.length ?? 0) > 0,
      10_000,
      'the second instance getting items',
    );
    expect(firstItems!.previousItems).toEqual([0, 1, 2]);
    expect([...firstItems!.items, ...secondItems!.items].sort()).toEqual([0, 1, 2]);
    expect(ofType(secondEvents(), 'leadership.gained', 'reports')).toEqual([]);

    // The first instance's session ends: it says so, and again when it has registered on a new one.
    const credentials = appRegistryCenter(first).getSessionCredentials()!;
    proxy.cut();
    await killSession(credentials);
    // Its leadership went with the session: the second instance leads now.
    await eventually(
      () => ofType(secondEvents(), 'leadership.gained', 'reports').length,
      (n) => n === 1,
      15_000,
      'the second instance leading',
    );
    proxy.restore();
    await eventually(
      () => ofType(firstEvents(), 'session.rejoined', 'reports').length,
      (n) => n === 1,
      20_000,
      'the first instance rejoining',
    );
    expect(ofType(firstEvents(), 'session.lost', 'reports')).toHaveLength(1);
    expect(ofType(firstEvents(), 'leadership.lost', 'reports')).toHaveLength(1);
    const order = firstEvents()
      .filter((event) => event.jobName === 'reports' && event.type.startsWith('session.'))
      .map((event) => event.type);
    expect(order).toEqual(['session.lost', 'session.rejoined']);
  });

  it('tells a misfire flagged (items still running at a firing) and a failover claimed (a crashed owner)', async () => {
    heard = [];
    const proxies = [await proxyTo(), await proxyTo()];
    const namespace = uniqueNamespace('misfire-failover');
    const apps = [
      await bootWith(namespace, '127.0.0.2', proxies[0]!.connectString, [HandoverJob, AllEvents]),
      await bootWith(namespace, '127.0.0.3', proxies[1]!.connectString, [HandoverJob, AllEvents]),
    ];
    const zk = await observer(namespace);
    await eventually(
      () => zk.getChildren('/handover/instances'),
      (ids) => ids?.length === 2,
      10_000,
      'both instances registered',
    );
    await apps[0]!.get(ElasticJobRegistry).trigger('handover');
    // The owner of the only item runs it, and it stays running: the next cron instants find it still running.
    const flagged = await eventually(
      () => heard.filter((event) => event.type === 'misfire.flagged' && event.jobName === 'handover'),
      (events) => events.length > 0,
      10_000,
      'a misfire flagged',
    );
    expect(flagged[0]).toMatchObject({ items: [0] });
    const owner = flagged[0]!.instanceId.startsWith('127.0.0.2@-@') ? 0 : 1;
    const other = 1 - owner;
    expect(await zk.exists('/handover/sharding/0/misfire')).toBeDefined();

    // The owner crashes (its session ends while it is cut off): the other instance takes the item over.
    const credentials = appRegistryCenter(apps[owner]!).getSessionCredentials()!;
    proxies[owner]!.cut();
    await killSession(credentials);
    const claimed = await eventually(
      () => heard.filter((event) => event.type === 'failover.claimed' && event.jobName === 'handover'),
      (events) => events.length > 0,
      15_000,
      'the item taken over',
    );
    expect(claimed).toEqual([
      expect.objectContaining({
        shardingItem: 0,
        instanceId: expect.stringMatching(other === 0 ? /^127\.0\.0\.2@/ : /^127\.0\.0\.3@/),
      }),
    ]);
    await eventually(
      () =>
        heard.some((event) => event.type === 'item.started' && event.source === 'FAILOVER' && event.shardingItem === 0),
      (seen) => seen,
      10_000,
      'the taken-over item running as FAILOVER',
    );
    proxies[owner]!.restore();
  });

  it('refuses an unknown event type or job name at bootstrap, naming the method', async () => {
    @Injectable()
    class Misspelt {
      @OnElasticJobEvent('item.finished' as 'item.completed')
      onFinished(): void {}
    }
    await expect(bootApp(appOptions(uniqueNamespace('bad-event')), [ReportJobs, Misspelt])).rejects.toThrow(
      JobConfigurationError,
    );
    await expect(bootApp(appOptions(uniqueNamespace('bad-event')), [ReportJobs, Misspelt])).rejects.toThrow(
      /@OnElasticJobEvent\(\) on Misspelt\.onFinished names 'item\.finished', not an event type/,
    );
    @Injectable()
    class WrongJob {
      @OnElasticJobEvent('item.completed', { jobs: ['report'] })
      onCompleted(): void {}
    }
    await expect(bootApp(appOptions(uniqueNamespace('bad-event')), [ReportJobs, WrongJob])).rejects.toThrow(
      /names 'report', not a job of this app/,
    );
  });
});
