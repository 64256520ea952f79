import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientProxyFactory, Transport } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import type { TestingModule } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ElasticJobModule,
  ElasticJobOperator,
  JobConfigurationError,
  ShardedJob,
  type ElasticJobEvent,
  type ShardingContext,
  type WorkflowOptions,
  type WorkflowRun,
} from '../../lib/index.js';
import { ElasticJobEventBus } from '../../lib/events/elastic-job-event-bus.js';
import { findFreePort } from '../../lib/devtools/local-zookeeper.js';
import { elasticJobMessagesController } from '../../lib/microservices/index.js';
import { cliOn } from '../support/cli.js';
import { appOptions, bootApp } from '../support/app.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * Workflows on a real ZooKeeper, three instances in one process: a diamond of sharded one-off jobs, a -> b, c -> d.
 * What ran is counted from the items' own records (the handlers'), not the library's.
 */

afterEach(async () => {
  await releaseAll();
});

const TOTAL = 4;
/** Every item execution, in order: its job, item, instance and whether it started or ended. */
const log: Array<{ job: string; item: number; instance: string; at: 'start' | 'end' }> = [];
/** `job:item` that throw, once each. */
const failOnce = new Set<string>();
/** While set, the items of `a` wait for it once started. */
let holdA: Promise<void> | undefined;

async function runStep(job: string, context: ShardingContext): Promise<void> {
  const instance = context.taskId.split('@-@')[3]!;
  log.push({ job, item: context.shardingItem, instance, at: 'start' });
  await new Promise((resolve) => setImmediate(resolve));
  if (job === 'a') await holdA;
  if (failOnce.delete(`${job}:${context.shardingItem}`)) throw new Error(`${job} item ${context.shardingItem} failed`);
  log.push({ job, item: context.shardingItem, instance, at: 'end' });
}

@Injectable()
class DiamondJobs {
  @ShardedJob({ jobName: 'a', oneOff: true, shardingTotalCount: TOTAL })
  a(context: ShardingContext): Promise<void> {
    return runStep('a', context);
  }

  @ShardedJob({ jobName: 'b', oneOff: true, shardingTotalCount: TOTAL })
  b(context: ShardingContext): Promise<void> {
    return runStep('b', context);
  }

  @ShardedJob({ jobName: 'c', oneOff: true, shardingTotalCount: TOTAL })
  c(context: ShardingContext): Promise<void> {
    return runStep('c', context);
  }

  @ShardedJob({ jobName: 'd', oneOff: true, shardingTotalCount: TOTAL })
  d(context: ShardingContext): Promise<void> {
    return runStep('d', context);
  }
}

const DIAMOND: WorkflowOptions = { name: 'nightly', steps: { a: [], b: ['a'], c: ['a'], d: ['b', 'c'] } };

async function cluster(namespace: string): Promise<{ apps: TestingModule[]; events: ElasticJobEvent[] }> {
  const apps: TestingModule[] = [];
  const events: ElasticJobEvent[] = [];
  for (const ip of ['127.0.0.2', '127.0.0.3', '127.0.0.4']) {
    const app = await bootApp(appOptions(namespace, { instance: { ip }, workflows: [DIAMOND] }), [DiamondJobs]);
    hold(() => app.close());
    app.get(ElasticJobEventBus).on('test', (event) => void events.push(event), {
      types: [
        'workflow.run.started',
        'workflow.step.started',
        'workflow.step.failed',
        'workflow.run.completed',
        'workflow.run.failed',
      ],
    });
    apps.push(app);
  }
  return { apps, events };
}

async function runEnded(operator: ElasticJobOperator, runId: string): Promise<WorkflowRun> {
  return eventually(
    async () => (await operator.getWorkflowRuns('nightly')).find((run) => run.id === runId),
    (run) => run !== undefined && run.state !== 'RUNNING',
    30_000,
    `run ${runId} to end`,
  ) as Promise<WorkflowRun>;
}

/** How many times each item of the job ended (ran to its end), from the handlers' own records. */
function endsOf(job: string, since = 0): number[] {
  const counts = Array.from({ length: TOTAL }, () => 0);
  for (const entry of log.slice(since)) if (entry.job === job && entry.at === 'end') counts[entry.item]!++;
  return counts;
}

/** The position in the log of the first start of the job and of the last end (since `since`). */
function span(job: string, since = 0): { firstStart: number; lastEnd: number } {
  const entries = log.map((entry, index) => ({ ...entry, index })).slice(since);
  return {
    firstStart: entries.find((entry) => entry.job === job && entry.at === 'start')!.index,
    lastEnd: entries.findLast((entry) => entry.job === job && entry.at === 'end')!.index,
  };
}

describe('workflows', () => {
  it('runs a diamond of sharded steps: every item of every step once per run, a child after all its parents', async () => {
    const namespace = uniqueNamespace('workflow');
    const { apps, events } = await cluster(namespace);
    const operator = apps[0]!.get(ElasticJobOperator);
    for (let round = 1; round <= 2; round++) {
      const since = log.length;
      let release!: () => void;
      holdA = new Promise<void>((resolve) => (release = resolve));
      const runId = await operator.triggerWorkflow('nightly');
      // One run at a time: a trigger while it runs is refused.
      await expect(operator.triggerWorkflow('nightly')).rejects.toThrow(/under way: one run at a time/);
      // Every item of a has started and waits: its children have not started, in the run as in the items' records.
      await eventually(
        () => log.slice(since).filter((entry) => entry.job === 'a' && entry.at === 'start').length,
        (n) => n === TOTAL,
        15_000,
        'every item of a started',
      );
      const meanwhile = (await operator.getWorkflowRuns('nightly'))[0]!;
      expect(meanwhile.id).toBe(runId);
      expect(Object.values(meanwhile.steps).map((step) => step.state)).toEqual([
        'RUNNING',
        'PENDING',
        'PENDING',
        'PENDING',
      ]);
      expect(log.slice(since).filter((entry) => entry.job !== 'a')).toEqual([]);
      release();
      holdA = undefined;
      const run = await runEnded(operator, runId);
      expect(run.state).toBe('COMPLETED');
      for (const job of ['a', 'b', 'c', 'd']) {
        expect(endsOf(job, since), `${job}, run ${round}`).toEqual([1, 1, 1, 1]);
        expect(run.steps[job]).toMatchObject({ state: 'COMPLETED', attempts: 1 });
      }
      // Every item of a parent had ended before the first item of its child started.
      expect(span('a', since).lastEnd).toBeLessThan(span('b', since).firstStart);
      expect(span('a', since).lastEnd).toBeLessThan(span('c', since).firstStart);
      expect(span('b', since).lastEnd).toBeLessThan(span('d', since).firstStart);
      expect(span('c', since).lastEnd).toBeLessThan(span('d', since).firstStart);
    }
    // Sharded: the items ran on more than one instance.
    expect(new Set(log.map((entry) => entry.instance)).size).toBeGreaterThan(1);
    // Told once per move across the cluster, by the coordinator.
    await eventually(
      () => events.filter((event) => event.type === 'workflow.run.completed').length,
      (n) => n === 2,
      10_000,
      'two run.completed events',
    );
    expect(events.filter((event) => event.type === 'workflow.run.started')).toHaveLength(2);
    expect(events.filter((event) => event.type === 'workflow.step.started')).toHaveLength(8);
    const runs = await operator.getWorkflowRuns('nightly');
    expect(runs.map((run) => run.state)).toEqual(['COMPLETED', 'COMPLETED']);
    // The newest only, when asked (the console's view reads its few of up to 1000 kept).
    expect(await operator.getWorkflowRuns('nightly', { limit: 1 })).toEqual([runs[0]]);
    await expect(operator.getWorkflowRuns('nightly', { limit: 0 })).rejects.toThrow(
      "getWorkflowRuns: invalid 'limit': must be an integer 1..1000, got 0",
    );
  });

  it('fails the run on a failed item of b and never starts d; re-running b failed item completes the run', async () => {
    const namespace = uniqueNamespace('workflow-fail');
    const { apps, events } = await cluster(namespace);
    const operator = apps[1]!.get(ElasticJobOperator);
    const since = log.length;
    failOnce.add('b:2');
    const runId = await operator.triggerWorkflow('nightly');
    const failed = await runEnded(operator, runId);
    expect(failed.state).toBe('FAILED');
    expect(failed.steps.b).toMatchObject({ state: 'FAILED', failedItems: [2] });
    expect(failed.steps.c!.state).toBe('COMPLETED');
    expect(failed.steps.d!.state).toBe('PENDING');
    expect(endsOf('d', since)).toEqual([0, 0, 0, 0]);
    await eventually(
      () => events.filter((event) => event.type === 'workflow.run.failed').length,
      (n) => n === 1,
      10_000,
      'the run.failed event',
    );
    expect(events.filter((event) => event.type === 'workflow.step.failed')).toMatchObject([
      { type: 'workflow.step.failed', workflow: 'nightly', runId, step: 'b', jobName: 'b', items: [2] },
    ]);
    // Not active any more: the workflow could be triggered; the operator re-runs b's failed item instead.
    await expect(operator.rerunWorkflowStep('nightly', runId, 'c')).rejects.toThrow(/COMPLETED, not FAILED/);
    const rerun = await operator.rerunWorkflowStep('nightly', runId, 'b');
    expect(rerun.state).toBe('RUNNING');
    const done = await runEnded(operator, runId);
    expect(done.state).toBe('COMPLETED');
    expect(done.steps.b!.attempts).toBe(2);
    expect(endsOf('b', since)).toEqual([1, 1, 1, 1]); // item 2 ended once: on its re-run
    expect(log.slice(since).filter((entry) => entry.job === 'b' && entry.at === 'start')).toHaveLength(TOTAL + 1);
    expect(endsOf('d', since)).toEqual([1, 1, 1, 1]);
    expect(endsOf('a', since)).toEqual([1, 1, 1, 1]);
  });

  it('cancels a run, refuses bad operator input, and keeps the tree apart from the jobs', async () => {
    const namespace = uniqueNamespace('workflow-ops');
    const { apps } = await cluster(namespace);
    const operator = apps[2]!.get(ElasticJobOperator);
    await expect(operator.triggerWorkflow('nope')).rejects.toMatchObject({
      name: 'WorkflowNotFoundError',
      message: expect.stringMatching(/no workflow 'nope' in this namespace/),
    });
    await expect(operator.triggerWorkflow('a/b')).rejects.toThrow(/triggerWorkflow: invalid 'name'/);
    await expect(operator.cancelWorkflowRun('nightly', 'missing')).rejects.toMatchObject({
      name: 'WorkflowNotFoundError',
      runId: 'missing',
      message: expect.stringMatching(/no run 'missing' of 'nightly' is kept/),
    });
    await expect(operator.rerunWorkflowStep('nightly', 'r', 'b', { items: 'some' as 'all' })).rejects.toThrow(
      /invalid 'items'/,
    );
    const since = log.length;
    let release!: () => void;
    holdA = new Promise<void>((resolve) => (release = resolve));
    const runId = await operator.triggerWorkflow('nightly');
    await eventually(
      () => log.slice(since).filter((entry) => entry.job === 'a' && entry.at === 'start').length,
      (n) => n === TOTAL,
      15_000,
      'every item of a started',
    );
    const cancelled = await operator.cancelWorkflowRun('nightly', runId);
    expect(cancelled.state).toBe('CANCELLED');
    await expect(operator.cancelWorkflowRun('nightly', runId)).rejects.toThrow(/has ended \(CANCELLED\)/);
    release();
    holdA = undefined;
    await eventually(
      () => endsOf('a', since),
      (counts) => counts.every((n) => n === 1),
      15_000,
      "a's items ending",
    );
    // Another run may start now.
    const next = await operator.triggerWorkflow('nightly');
    expect((await runEnded(operator, next)).state).toBe('COMPLETED');
    // The cancelled run started nothing more: b, c and d ran once, in the next run only.
    for (const job of ['b', 'c', 'd']) expect(endsOf(job, since), job).toEqual([1, 1, 1, 1]);
    expect((await operator.getWorkflowRuns('nightly')).find((run) => run.id === runId)!.steps.b!.state).toBe('PENDING');
    // The jobs list is the same as without workflows: the workflows' node has no config.
    expect((await operator.getAllJobsBriefInfo()).map((job) => job.jobName)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('refuses a bad workflow at forRoot() before anything is written', async () => {
    const namespace = uniqueNamespace('workflow-bad');
    const zk = await observer(namespace);
    await expect(
      bootApp(appOptions(namespace, { workflows: [{ name: 'w', steps: { a: [], b: ['a'], x: ['b'] } }] }), [
        DiamondJobs,
      ]),
    ).rejects.toThrow(JobConfigurationError);
    await expect(
      bootApp(appOptions(namespace, { workflows: [{ name: 'w', steps: { a: ['d'], d: ['a'] } }] }), [DiamondJobs]),
    ).rejects.toThrow(/workflows\[w\]\.steps'.*cycle/);
    expect(await zk.getChildren('/')).toEqual([]);
  });

  it('is operated from the CLI and the message patterns as from the operator API', async () => {
    const namespace = uniqueNamespace('workflow-surfaces');
    const port = await findFreePort();
    @Module({
      imports: [ElasticJobModule.forRoot(appOptions(namespace, { workflows: [DIAMOND] }))],
      controllers: [elasticJobMessagesController()],
      providers: [DiamondJobs],
    })
    class SurfacesApp {}
    const app = await NestFactory.create(SurfacesApp, { logger: ['error'] });
    app.connectMicroservice({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
    await app.startAllMicroservices();
    await app.init();
    hold(() => app.close());
    const client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
    await client.connect();
    hold(() => client.close());
    const ask = <T>(pattern: string, payload: unknown): Promise<T> =>
      firstValueFrom(client.send<T>(`elastic-job.${pattern}`, payload));

    // Patterns: a run triggered, followed to its end.
    const { runId } = await ask<{ runId: string }>('workflow-trigger', { workflow: 'nightly' });
    await eventually(
      () => ask<WorkflowRun[]>('workflow-runs', { workflow: 'nightly' }),
      (runs) => runs[0]?.id === runId && runs[0].state === 'COMPLETED',
      30_000,
      'the run completed, as the pattern tells',
    );
    // CLI: a run held in a, cancelled; the runs listed.
    const since = log.length;
    let release!: () => void;
    holdA = new Promise<void>((resolve) => (release = resolve));
    const triggered = await cliOn(namespace, 'workflow-trigger', 'nightly', '--json');
    expect(triggered.code).toBe(0);
    const second = (JSON.parse(triggered.stdout) as { runId: string }).runId;
    await eventually(
      () => log.slice(since).filter((entry) => entry.job === 'a' && entry.at === 'start').length,
      (n) => n === TOTAL,
      15_000,
      'every item of a started',
    );
    const cancelled = await cliOn(namespace, 'workflow-cancel', 'nightly', second);
    expect(cancelled).toMatchObject({ code: 0, stdout: `Cancelled run ${second} of workflow 'nightly'.\n` });
    release();
    holdA = undefined;
    // The workflows, as the pattern and the CLI list them (getWorkflows).
    expect(await ask<unknown[]>('workflows', {})).toEqual([DIAMOND]);
    const workflowsListed = await cliOn(namespace, 'workflows');
    expect(workflowsListed).toMatchObject({ code: 0 });
    expect(workflowsListed.stdout).toMatch(/^nightly +- +a b<-a c<-a d<-b,c$/m);
    const listed = await cliOn(namespace, 'workflow-runs', 'nightly');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`${second}  CANCELLED`);
    expect(listed.stdout).toContain(`${runId}  COMPLETED`);
    expect(listed.stdout).toMatch(/a:COMPLETED b:COMPLETED c:COMPLETED d:COMPLETED/);
    const refused = await cliOn(namespace, 'workflow-rerun', 'nightly', second, 'b', 'some');
    expect(refused.code).toBe(2);
    const notFailed = await cliOn(namespace, 'workflow-rerun', 'nightly', runId, 'b');
    expect(notFailed).toMatchObject({ code: 2 });
    expect(notFailed.stderr).toMatch(
      /rerunWorkflowStep: invalid 'job': run .* is COMPLETED: trigger a new run instead/,
    );
    // What is not there exits 3, as an unknown job does.
    const noWorkflow = await cliOn(namespace, 'workflow-runs', 'weekly');
    expect(noWorkflow).toMatchObject({ code: 3 });
    expect(noWorkflow.stderr).toMatch(/getWorkflowRuns: no workflow 'weekly' in this namespace/);
    const noRun = await cliOn(namespace, 'workflow-cancel', 'nightly', 'r-none');
    expect(noRun).toMatchObject({ code: 3 });
    expect(noRun.stderr).toMatch(/cancelWorkflowRun: no run 'r-none' of 'nightly' is kept/);
  });

  it('runs on its cron: one run per instant across instances, a firing skipped while a run is under way', async () => {
    const namespace = uniqueNamespace('workflow-cron');
    const operator = await ElasticJobOperator.connect({ serverLists: zkConnect(), namespace });
    hold(() => operator.close());
    let release!: () => void;
    holdA = new Promise<void>((resolve) => (release = resolve));
    for (const ip of ['127.0.0.2', '127.0.0.3']) {
      const app = await bootApp(
        appOptions(namespace, { instance: { ip }, workflows: [{ ...DIAMOND, cron: '* * * * * *' }] }),
        [DiamondJobs],
      );
      hold(() => app.close());
    }
    // The first cron run holds in a: the firings of the next seconds find it under way and make no run.
    const first = await eventually(
      () => operator.getWorkflowRuns('nightly'),
      (runs) => runs.length === 1 && runs[0]!.steps.a!.state === 'RUNNING',
      15_000,
      'a cron run under way',
    );
    expect(first[0]).toMatchObject({ trigger: 'cron', state: 'RUNNING' });
    expect(first[0]!.id).toMatch(/^\d{8}T\d{9}Z-cron$/);
    const firstSecond = Math.floor(Date.parse(first[0]!.createdAt) / 1000);
    await eventually(
      () => Math.floor(Date.now() / 1000),
      (second) => second >= firstSecond + 3,
      10_000,
      'three more cron instants',
    );
    expect((await operator.getWorkflowRuns('nightly')).map((run) => run.id)).toEqual([first[0]!.id]);
    release();
    holdA = undefined;
    // Released, the run completes and the next instants make runs again, one per instant.
    const later = await eventually(
      () => operator.getWorkflowRuns('nightly'),
      (runs) => runs.filter((run) => run.state === 'COMPLETED').length >= 3,
      30_000,
      'more cron runs completed',
    );
    const ids = later.map((run) => run.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(later.every((run) => run.trigger === 'cron')).toBe(true);
  });
});
