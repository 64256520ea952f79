import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { runCli } from '../../lib/cli/run.js';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ElasticJobConsoleModule } from '../../lib/console/index.js';
import type { TestingModule } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ElasticJobModule,
  ElasticJobOperator,
  ElasticJobRegistry,
  ItemCoveredError,
  ItemTimeoutError,
  ShardedJob,
  type ElasticJobEvent,
  type JobErrorHandler,
  type ShardingContext,
} from '../../lib/index.js';
import { appOptions, bootApp } from '../support/app.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * The item policies (docs/guide/item-policies.md) on a real ZooKeeper: a timeout that frees the item's marker, retries
 * with backoff on the owning instance only, cover-early, and progress and item logs read back through the operator API.
 */

afterEach(async () => {
  await releaseAll();
});

/** What the handlers did, per test (reset by each). */
let calls: Array<{ at: number; context: ShardingContext }> = [];
let handled: Array<{ error: unknown; attempt: number }> = [];
let releases: Array<() => void> = [];

const recordingHandler: JobErrorHandler = {
  type: 'RECORD',
  handleException(_jobName, error, context) {
    handled.push({ error, attempt: context.attempt });
  },
};

function reset(): void {
  calls = [];
  handled = [];
  releases = [];
}

@Injectable()
class HangingJob {
  /** The first run ignores its signal and never settles; later runs return at once. */
  @ShardedJob({
    jobName: 'hanging',
    cron: '* * * * * *',
    shardingTotalCount: 1,
    itemTimeoutMilliseconds: 300,
    misfire: true,
    jobErrorHandlerType: recordingHandler,
  })
  run(context: ShardingContext): Promise<void> | void {
    calls.push({ at: Date.now(), context });
    if (calls.length === 1) return new Promise(() => undefined);
  }
}

@Injectable()
class FlakyJob {
  /** Fails its first two attempts, then succeeds. */
  @ShardedJob({
    jobName: 'flaky',
    cron: '0 0 0 1 1 *',
    shardingTotalCount: 1,
    retry: { attempts: 4, backoff: 'exponential', delayMilliseconds: 150, maxDelayMilliseconds: 1000 },
    jobErrorHandlerType: recordingHandler,
  })
  run(context: ShardingContext): void {
    calls.push({ at: Date.now(), context });
    if (calls.length <= 2) throw new Error(`passing trouble ${calls.length}`);
  }
}

@Injectable()
class AlwaysFailingJob {
  @ShardedJob({
    jobName: 'failing',
    cron: '0 0 0 1 1 *',
    shardingTotalCount: 1,
    retry: { attempts: 5, delayMilliseconds: 600_000 },
    jobErrorHandlerType: recordingHandler,
  })
  run(context: ShardingContext): void {
    calls.push({ at: Date.now(), context });
    throw new Error('down for good');
  }
}

@Injectable()
class CoveringJob {
  /** The first run waits for its signal; the runs after return at once. */
  @ShardedJob({ jobName: 'covering', cron: '* * * * * *', shardingTotalCount: 1, overlap: 'cover-early' })
  async run(context: ShardingContext): Promise<void> {
    calls.push({ at: Date.now(), context });
    if (calls.length > 1) return;
    await new Promise<void>((_, reject) =>
      context.signal.addEventListener('abort', () => reject(context.signal.reason as Error), { once: true }),
    );
  }
}

@Injectable()
class CoveringOneAtATimeJob {
  /** One item at a time; the first run waits for its signal, the runs after return at once. */
  @ShardedJob({
    jobName: 'covering-queue',
    cron: '* * * * * *',
    shardingTotalCount: 2,
    maxConcurrentItems: 1,
    overlap: 'cover-early',
  })
  async run(context: ShardingContext): Promise<void> {
    calls.push({ at: Date.now(), context });
    if (calls.length > 1) return;
    await new Promise<void>((_, reject) =>
      context.signal.addEventListener('abort', () => reject(context.signal.reason as Error), { once: true }),
    );
  }
}

@Injectable()
class ReportingJob {
  /** Logs, reports progress, then waits for the test's release. */
  @ShardedJob({ jobName: 'reporting', cron: '0 0 0 1 1 *', shardingTotalCount: 2 })
  async run(context: ShardingContext): Promise<void> {
    calls.push({ at: Date.now(), context });
    context.logger.log(`item ${context.shardingItem} starts`);
    context.reportProgress({ done: 1, of: 3, stage: 'reading' });
    for (let i = 0; i < 400; i++) context.logger.warn(`line ${i}`);
    await new Promise<void>((resolve) => releases.push(resolve));
  }
}

function events(app: { get: (type: typeof ElasticJobRegistry) => ElasticJobRegistry }): ElasticJobEvent[] {
  const seen: ElasticJobEvent[] = [];
  const subscription = app.get(ElasticJobRegistry).events$.subscribe((event) => seen.push(event));
  hold(() => subscription.unsubscribe());
  return seen;
}

describe('item policies', () => {
  it('aborts a hanging item at its timeout, removes its marker, and the next firing runs on time', async () => {
    reset();
    const namespace = uniqueNamespace('item-timeout');
    const app = await bootApp(appOptions(namespace), [HangingJob]);
    hold(() => app.close());
    const seen = events(app);
    const zk = await observer(namespace);
    await eventually(
      () => calls.length,
      (n) => n >= 2,
      15_000,
      'the firing after the timed-out one',
    );
    // The hanging run's signal aborted with the timeout, and it failed with it everywhere.
    const first = calls[0]!.context;
    expect(first.signal.aborted).toBe(true);
    expect(first.signal.reason).toBeInstanceOf(ItemTimeoutError);
    expect(handled[0]!.error).toBeInstanceOf(ItemTimeoutError);
    const failed = await eventually(
      () => seen.find((event) => event.type === 'item.completed' && !event.success),
      (event) => event !== undefined,
      5000,
      'the failed completion',
    );
    expect(failed).toMatchObject({ type: 'item.completed', failureCause: expect.stringMatching(/ItemTimeoutError/) });
    // On time: once the hanging item ended at its timeout, no firing was skipped for it (its marker gone with it).
    // Only an instant that came while it still hung may have been skipped, and run once as a misfire after it: a
    // loaded host's timers may fire the 300 ms timeout later than the next second (seen at load 20).
    expect(calls[1]!.context.taskId).toBe(first.taskId);
    const ended = seen.indexOf(failed!);
    const skipped = (event: ElasticJobEvent): boolean => event.type === 'firing.skipped';
    expect(seen.slice(ended + 1).filter(skipped)).toEqual([]);
    const caughtUp = seen.filter((event) => event.type === 'item.started' && event.source !== 'NORMAL_TRIGGER');
    expect(caughtUp.length).toBeLessThanOrEqual(seen.slice(0, ended).some(skipped) ? 1 : 0);
    const history = app.get(ElasticJobRegistry).recentExecutions({ jobName: 'hanging', result: 'failure', limit: 5 });
    expect(history[0]!.failureCause).toMatch(/ran past its timeout of 300 ms/);
    await app.close();
    expect(await zk.exists('/hanging/sharding/0/running')).toBeUndefined();
  });

  it('retries a failed item on its instance only, with its backoff, and calls the handler only after the last', async () => {
    reset();
    const namespace = uniqueNamespace('item-retry');
    const apps: TestingModule[] = [];
    for (const ip of ['10.0.41.1', '10.0.41.2']) {
      const app = await bootApp(appOptions(namespace, { instance: { ip } }), [FlakyJob]);
      hold(() => app.close());
      apps.push(app);
    }
    const seen = events(apps[0]!);
    const other = events(apps[1]!);
    const operator = await ElasticJobOperator.connect({ serverLists: zkConnect(), namespace });
    hold(() => operator.close());
    await operator.trigger('flaky');
    const completions = () =>
      [...seen, ...other].filter((event) => event.type === 'item.completed' && event.jobName === 'flaky');
    await eventually(
      () => completions().filter((event) => event.type === 'item.completed' && event.success).length,
      (n) => n === 1,
      15_000,
      'the third attempt to succeed',
    );
    await eventually(
      () => apps.every((app) => !app.get(ElasticJobRegistry).getJobStatus('flaky').firing),
      (idle) => idle,
      5000,
      'both instances idle',
    );
    expect(calls.map((call) => call.context.attempt)).toEqual([1, 2, 3]);
    // One instance ran all three: its id is in the task id.
    expect(new Set(calls.map((call) => call.context.taskId)).size).toBe(1);
    // Delays no shorter than asked: 150 ms, then 300 ms (exponential).
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(150);
    expect(calls[2]!.at - calls[1]!.at).toBeGreaterThanOrEqual(300);
    // Succeeded at last: the error handler was never called. Each attempt an event with its number.
    expect(handled).toEqual([]);
    const attempts = completions().map((event) =>
      event.type === 'item.completed' ? [event.success, event.attempt] : undefined,
    );
    expect(attempts).toEqual([
      [false, 1],
      [false, 2],
      [true, 3],
    ]);
    // And an execution record each, with its number, in the history of the instance that ran them.
    const records = (await operator.getExecutions({ jobName: 'flaky', limit: 10 })).executions;
    expect(records.map((record) => record.attempt).sort()).toEqual([1, 2, 3]);
    expect(new Set(records.map((record) => record.instanceId)).size).toBe(1);
  });

  it('calls the error handler once after the last attempt, and starts no retry once shutting down', async () => {
    reset();
    const namespace = uniqueNamespace('item-retry-stop');
    const app = await bootApp(appOptions(namespace), [AlwaysFailingJob]);
    hold(() => app.close());
    const operator = await ElasticJobOperator.connect({ serverLists: zkConnect(), namespace });
    hold(() => operator.close());
    await operator.trigger('failing');
    await eventually(
      () => calls.length,
      (n) => n === 1,
      10_000,
      'the first attempt',
    );
    // The retry waits 10 minutes: shutting down wakes it, and it gives up (the test's timeout would catch a wait).
    await app.close();
    expect(calls).toHaveLength(1);
    // It gave up as the shutdown began, not when the shutdown's timeout aborted it.
    expect(calls[0]!.context.signal.aborted).toBe(false);
    expect(handled).toHaveLength(1);
    expect(handled[0]).toMatchObject({ attempt: 1 });
    expect((handled[0]!.error as Error).message).toBe('down for good');
  });

  it("cover-early: a firing that finds this instance's items running aborts them and starts its own", async () => {
    reset();
    const namespace = uniqueNamespace('item-cover');
    const app = await bootApp(appOptions(namespace), [CoveringJob]);
    hold(() => app.close());
    const seen = events(app);
    await eventually(
      () => calls.length,
      (n) => n >= 2,
      15_000,
      'the covering firing',
    );
    const first = calls[0]!.context;
    expect(first.signal.reason).toBeInstanceOf(ItemCoveredError);
    expect(String((first.signal.reason as Error).message)).toMatch(/cover-early/);
    const covered = await eventually(
      () => seen.find((event) => event.type === 'item.completed' && !event.success),
      (event) => event !== undefined,
      5000,
      'the covered completion',
    );
    expect(covered).toMatchObject({ failureCause: expect.stringMatching(/ItemCoveredError/) });
    expect(seen.some((event) => event.type === 'firing.skipped')).toBe(false);
  });

  it('cover-early: the covered firing starts none of its items still waiting their turn', async () => {
    reset();
    const namespace = uniqueNamespace('item-cover-queue');
    const app = await bootApp(appOptions(namespace), [CoveringOneAtATimeJob]);
    hold(() => app.close());
    await eventually(
      () => calls.length,
      (n) => n >= 3,
      15_000,
      'the covering firing',
    );
    // Item 0 hung and was covered; item 1, waiting its turn in that firing, did not start there: the next run is
    // the covering firing's item 0.
    expect(calls.map((call) => call.context.shardingItem).slice(0, 3)).toEqual([0, 0, 1]);
    expect(calls[0]!.context.signal.reason).toBeInstanceOf(ItemCoveredError);
  });

  it('reads the progress of running items and the lines of an execution through the operator API', async () => {
    reset();
    const namespace = uniqueNamespace('item-progress');
    const app = await bootApp(appOptions(namespace), [ReportingJob]);
    hold(() => app.close());
    const operator = await ElasticJobOperator.connect({ serverLists: zkConnect(), namespace });
    hold(() => operator.close());
    const zk = await observer(namespace);
    const written: string[] = [];
    await operator.trigger('reporting');
    const info = await eventually(
      () => operator.getShardingInfo('reporting', { progress: true }),
      (items) => items.length === 2 && items.every((item) => item.progress !== undefined),
      10_000,
      'both items to report progress',
    );
    expect(info[0]!.progress).toMatchObject({ value: { done: 1, of: 3, stage: 'reading' } });
    expect(info[0]!.progress!.at).toBeInstanceOf(Date);
    // The CLI's sharding shows it too.
    let stdout = '';
    const code = await runCli(['--zk', zkConnect(), '--namespace', namespace, 'sharding', 'reporting'], {
      stdout: new Writable({
        write(chunk: Buffer, _encoding, done) {
          stdout += chunk.toString('utf8');
          done();
        },
      }),
      stderr: new Writable({ write: (_chunk, _encoding, done) => done() }),
      env: {},
    });
    expect(code).toBe(0);
    expect(stdout).toMatch(/PROGRESS/);
    expect(stdout).toContain('done=1 of=3 stage=reading');
    // Without asking: no progress, no query.
    expect((await operator.getShardingInfo('reporting'))[0]!.progress).toBeUndefined();
    // The running execution's lines are there already.
    const running = await eventually(
      () => operator.getExecutions({ jobName: 'reporting', item: 0, limit: 1 }),
      (answer) => answer.executions.length === 1,
      5000,
      'the running execution',
    );
    const record = running.executions[0]!;
    const lines = await operator.getExecutionLines('reporting', record.id, { instance: record.instanceId! });
    expect(lines.instanceId).toBe(record.instanceId);
    expect(lines.lines!.lines[0]).toMatchObject({ level: 'log', message: 'item 0 starts' });
    // Bounded: 300 lines kept, the rest counted.
    expect(lines.lines!.lines).toHaveLength(300);
    expect(lines.lines!.dropped).toBe(101);
    // Asked of every instance when the caller does not say which.
    expect((await operator.getExecutionLines('reporting', record.id)).lines!.lines).toHaveLength(300);
    expect(
      (await operator.getExecutionLines('reporting', 'no-such-execution', { timeoutMs: 500 })).lines,
    ).toBeUndefined();
    // Nothing of the questions stays in the tree.
    written.push(...((await zk.getChildren('/reporting/executions')) ?? []));
    expect(written).toEqual([]);
    for (const release of releases) release();
    await eventually(
      () => app.get(ElasticJobRegistry).getJobStatus('reporting').firing,
      (firing) => !firing,
      5000,
      'the items to end',
    );
    expect((await operator.getShardingInfo('reporting', { progress: true })).every((item) => !item.progress)).toBe(
      true,
    );
  });

  it("shows the progress in the console job detail and an execution's lines in its own route", async () => {
    reset();
    const namespace = uniqueNamespace('item-console');
    @Module({
      imports: [ElasticJobModule.forRoot(appOptions(namespace)), ElasticJobConsoleModule.forRoot({})],
      providers: [ReportingJob],
    })
    class ConsoleApp {}
    const app = await NestFactory.create(ConsoleApp, { logger: ['error'] });
    hold(() => app.close());
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as AddressInfo;
    const api = async <T>(path: string): Promise<T> => {
      const response = await fetch(`http://127.0.0.1:${port}/elastic-job/api/${path}`);
      expect(response.status).toBe(200);
      return (await response.json()) as T;
    };
    await app.get(ElasticJobRegistry).trigger('reporting');
    type Detail = { sharding: Array<{ item: number; progress?: { value: unknown; at: string } }> };
    const detail = await eventually(
      () => api<Detail>('jobs/reporting'),
      (answer) => answer.sharding.length === 2 && answer.sharding.every((item) => item.progress !== undefined),
      10_000,
      'the progress in the job detail',
    );
    expect(detail.sharding[1]!.progress!.value).toEqual({ done: 1, of: 3, stage: 'reading' });
    type Executions = { executions: Array<{ id: string; item: number; instanceId: string }> };
    const history = await eventually(
      () => api<Executions>('executions?job=reporting'),
      (answer) => answer.executions.length === 2,
      5000,
      'both executions in the history',
    );
    // The history carries no lines; the lines come one execution at a time.
    expect(JSON.stringify(history)).not.toContain('line 1');
    const one = history.executions.find((execution) => execution.item === 1)!;
    const lines = await api<{ lines: { lines: Array<{ message: string }>; dropped: number }; instanceId: string }>(
      `jobs/reporting/executions/${one.id}/lines?instance=${encodeURIComponent(one.instanceId)}`,
    );
    expect(lines.instanceId).toBe(one.instanceId);
    expect(lines.lines.lines[0]!.message).toBe('item 1 starts');
    expect(lines.lines.dropped).toBe(101);
    for (const release of releases) release();
  });
});
