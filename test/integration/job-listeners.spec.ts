import { Injectable } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ElasticJobListener,
  ElasticJobRegistry,
  JobConfigurationError,
  ShardedJob,
  type DistributeOnceElasticJobListener,
  type ShardingContext,
  type ShardingContexts,
} from '../../lib/index.js';
import { appOptions, bootApp } from '../support/app.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace } from '../support/zk.js';

/**
 * Job listeners as Nest providers (docs/guide/events-and-listeners.md, "Job listeners"): ElasticJob's before/after
 * calls in order, with its ShardingContexts, and the distribute-once kind on ElasticJob's `guarantee` nodes, checked
 * against a Java peer played by the test through the same nodes (Java ElasticJob itself cannot be installed here).
 */

afterEach(async () => {
  await releaseAll();
});

const YEARLY = '0 0 0 1 1 *';

@Injectable()
class Audit {
  readonly lines: string[] = [];
  readonly contexts: ShardingContexts[] = [];
}

@Injectable()
class ListenedJob {
  constructor(private readonly audit: Audit) {}

  @ShardedJob({
    jobName: 'listened',
    cron: YEARLY,
    shardingTotalCount: 2,
    shardingItemParameters: '0=a,1=b',
    jobParameter: 'p',
  })
  run(context: ShardingContext): void {
    this.audit.lines.push(`item ${context.shardingItem}`);
  }

  @ShardedJob({ jobName: 'other', cron: YEARLY, shardingTotalCount: 1 })
  other(): void {}
}

@ElasticJobListener({ order: 2 })
class SecondListener implements ElasticJobListener {
  constructor(private readonly audit: Audit) {}

  beforeJobExecuted(contexts: ShardingContexts): void {
    this.audit.lines.push(`second before ${contexts.jobName}`);
    this.audit.contexts.push(contexts);
  }

  async afterJobExecuted(contexts: ShardingContexts): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 10));
    this.audit.lines.push(`second after ${contexts.jobName}`);
  }
}

@ElasticJobListener({ order: 1, jobs: ['listened'] })
class FirstListener implements ElasticJobListener {
  constructor(private readonly audit: Audit) {}

  beforeJobExecuted(contexts: ShardingContexts): void {
    this.audit.lines.push(`first before ${contexts.jobName}`);
  }

  afterJobExecuted(contexts: ShardingContexts): void {
    this.audit.lines.push(`first after ${contexts.jobName}`);
  }
}

@ElasticJobListener({ jobs: ['listened'] })
class ThrowingListener implements ElasticJobListener {
  beforeJobExecuted(): void {
    throw new Error('a listener that throws');
  }
}

describe('job listeners', () => {
  it('are called around each firing in order, with the ShardingContexts, injected, a throwing one logged', async () => {
    const app = await bootApp(appOptions(uniqueNamespace('listeners')), [
      Audit,
      ListenedJob,
      SecondListener,
      FirstListener,
      ThrowingListener,
    ]);
    hold(() => app.close());
    const registry = app.get(ElasticJobRegistry);
    const audit = app.get(Audit);
    const me = registry.getJobStatus('listened').instanceId;
    await registry.trigger('listened');
    await eventually(
      () => audit.lines,
      (lines) => lines.includes('second after listened'),
      15_000,
      'the firing and its listeners',
    );
    expect(audit.lines.slice(0, 2)).toEqual(['first before listened', 'second before listened']);
    expect(audit.lines.slice(2, 4).sort()).toEqual(['item 0', 'item 1']);
    expect(audit.lines.slice(4)).toEqual(['first after listened', 'second after listened']);
    expect(audit.contexts).toEqual([
      {
        taskId: `listened@-@0,1@-@READY@-@${me}`,
        jobName: 'listened',
        shardingTotalCount: 2,
        jobParameter: 'p',
        shardingItemParameters: { 0: 'a', 1: 'b' },
        shardingItems: [0, 1],
        source: 'NORMAL_TRIGGER',
      },
    ]);

    // The other job has only the listener that names no job.
    audit.lines.length = 0;
    await registry.trigger('other');
    await eventually(
      () => audit.lines,
      (lines) => lines.includes('second after other'),
      15_000,
      'other',
    );
    expect(audit.lines).toEqual(['second before other', 'second after other']);
  });

  it('refuses a listener naming an unknown job, with no method, or with an unbounded wait', async () => {
    @ElasticJobListener({ jobs: ['listend'] })
    class Misspelt implements ElasticJobListener {
      beforeJobExecuted(): void {}
    }
    @ElasticJobListener()
    class Empty {}
    @ElasticJobListener({ startedTimeoutMilliseconds: 0 })
    class Unbounded implements DistributeOnceElasticJobListener {
      beforeJobExecutedAtLastStarted(): void {}
    }
    const boot = (listener: new () => unknown) =>
      bootApp(appOptions(uniqueNamespace('bad-listener')), [Audit, ListenedJob, listener]);
    await expect(boot(Misspelt)).rejects.toThrow(/job listener Misspelt names 'listend', not a job of this app/);
    await expect(boot(Empty)).rejects.toThrow(/job listener Empty has none of the listener methods/);
    await expect(boot(Unbounded)).rejects.toThrow(JobConfigurationError);
    await expect(boot(Unbounded)).rejects.toThrow(/startedTimeoutMilliseconds.*must be an integer > 0/);
  });
});

// ------------------------------------------------------------------ distribute-once, with a Java peer's nodes

const onceCalls: string[] = [];

@Injectable()
class GuardedJob {
  @ShardedJob({ jobName: 'guarded', cron: YEARLY, shardingTotalCount: 2 })
  run(context: ShardingContext): void {
    onceCalls.push(`item ${context.shardingItem}`);
  }
}

@ElasticJobListener({ startedTimeoutMilliseconds: 30_000, completedTimeoutMilliseconds: 30_000 })
class OnceListener implements DistributeOnceElasticJobListener {
  beforeJobExecutedAtLastStarted(): void {
    onceCalls.push('once started');
  }

  afterJobExecutedAtLastCompleted(): void {
    onceCalls.push('once completed');
  }
}

describe('distribute-once listener', () => {
  it("takes part in ElasticJob's guarantee protocol: waits for a Java peer's items, and is the last or not", async () => {
    onceCalls.length = 0;
    const namespace = uniqueNamespace('guarantee');
    const app = await bootApp(appOptions(namespace, { instance: { ip: '127.0.0.2' } }), [GuardedJob, OnceListener]);
    hold(() => app.close());
    const registry = app.get(ElasticJobRegistry);
    const zk = await observer(namespace);

    // A Java ElasticJob instance of the same job, as it registers (its nodes, on the observer's session).
    const peer = '127.0.0.9@-@4242';
    await zk.create('/guarded/servers/127.0.0.9', Buffer.from('ENABLED'));
    await zk.create(
      `/guarded/instances/${peer}`,
      Buffer.from(`jobInstanceId: ${peer}\nserverIp: 127.0.0.9\n`),
      'EPHEMERAL',
    );
    await eventually(
      () => zk.exists('/guarded/leader/sharding/necessary'),
      (stat) => stat !== undefined,
      10_000,
      'the resharding flag for the newcomer',
    );
    await registry.trigger('guarded');

    // Ours registers its item under guarantee/started and waits for the peer's: no item runs meanwhile.
    const mine = await eventually(
      () => zk.getChildren('/guarded/guarantee/started'),
      (names) => names?.length === 1,
      10_000,
      'our started node',
    );
    const peerItem = mine![0] === '0' ? 1 : 0;
    expect(await zk.getData(`/guarded/sharding/${peerItem}/instance`).then((d) => d?.data.toString())).toBe(peer);
    expect(onceCalls).toEqual([]);

    // The peer starts its item and, being the last, runs its own listener and clears the nodes (GuaranteeService's
    // clearAllStartedInfo): ours goes on without calling its listener. One multi, as ours sees it when the peer won
    // the started latch before ours looked. Written apart, ours once saw every item there in between (a full run on a
    // loaded host), took the latch itself and ran the listener: right under the protocol (whoever holds the latch
    // runs it, once), but the other case than this one.
    const started = '/guarded/guarantee/started';
    await zk.transaction([
      { op: 'create', path: `${started}/${peerItem}`, data: Buffer.alloc(0), mode: 'PERSISTENT' },
      { op: 'remove', path: `${started}/${peerItem}` },
      { op: 'remove', path: `${started}/${mine![0]}` },
      { op: 'remove', path: started },
    ]);
    await eventually(
      () => onceCalls,
      (calls) => calls.includes(`item ${mine![0]}`),
      10_000,
      'our item running',
    );

    // Ours completes first and waits for the peer's completion; the peer completes; ours is the last: it runs
    // the listener once and clears guarantee/completed.
    await eventually(
      () => zk.getChildren('/guarded/guarantee/completed'),
      (names) => names?.length === 1 && names[0] === mine![0],
      10_000,
      'our completed node',
    );
    expect(onceCalls).not.toContain('once completed');
    await zk.create(`/guarded/guarantee/completed/${peerItem}`, Buffer.from(''));
    await eventually(
      () => onceCalls,
      (calls) => calls.includes('once completed'),
      10_000,
      'the listener, once',
    );
    await eventually(
      () => zk.exists('/guarded/guarantee/completed'),
      (stat) => stat === undefined,
      10_000,
      'guarantee/completed cleared',
    );
    expect(onceCalls).toEqual([`item ${mine![0]}`, 'once completed']);
  });
});
