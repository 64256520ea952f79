import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { type INestApplication, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { afterEach, describe, expect, it } from 'vitest';
import { ElasticJobModule, ShardedJob, type ShardingContext, type WorkflowRun } from '../../lib/index.js';
import { CSRF_HEADER, ElasticJobConsoleModule, type ConsoleWorkflow } from '../../lib/console/index.js';
import { appOptions } from '../support/app.js';
import { eventually, uniqueNamespace } from '../support/zk.js';

/**
 * The console's workflow routes against a real ZooKeeper (docs/guide/workflows.md, "In the console"): the workflows
 * with their DAG's layers and latest runs, the live stream naming a workflow whose run moved, and the operator's
 * verbs (trigger, re-run a failed step, cancel) behind the action guard. (The page: workflow-console-browser.spec.ts.)
 */

const apps: INestApplication[] = [];
afterEach(async () => {
  while (apps.length) await apps.pop()!.close();
});

/** `job:item` that throw, once each. */
const failOnce = new Set<string>();

@Injectable()
class NightlyJobs {
  @ShardedJob({ jobName: 'extract', oneOff: true, shardingTotalCount: 2 })
  extract(): void {}

  @ShardedJob({ jobName: 'transform', oneOff: true, shardingTotalCount: 2 })
  transform(context: ShardingContext): void {
    if (failOnce.delete(`transform:${context.shardingItem}`)) throw new Error('transform failed once');
  }

  @ShardedJob({ jobName: 'audit', oneOff: true, shardingTotalCount: 1 })
  audit(): void {}

  @ShardedJob({ jobName: 'load', oneOff: true, shardingTotalCount: 1 })
  load(): void {}
}

async function startConsole(namespace: string, actions: boolean): Promise<string> {
  @Module({
    imports: [
      ElasticJobModule.forRoot(
        appOptions(namespace, {
          workflows: [
            {
              name: 'nightly',
              steps: { extract: [], transform: ['extract'], audit: ['extract'], load: ['transform'] },
            },
          ],
        }),
      ),
      ElasticJobConsoleModule.forRoot({ actions }),
    ],
    providers: [NightlyJobs],
  })
  class ConsoleApp {}
  const app = await NestFactory.create(ConsoleApp, { logger: ['error'] });
  apps.push(app);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return `http://127.0.0.1:${port}/elastic-job`;
}

async function pageToken(url: string): Promise<Record<string, string>> {
  const response = await fetch(url);
  const token = /<meta name="elastic-job-csrf" content="([^"]+)">/.exec(await response.text())![1]!;
  return {
    [CSRF_HEADER]: token,
    cookie: response.headers.get('set-cookie')!.split(';')[0]!,
    'content-type': 'application/json',
  };
}

async function workflows(url: string): Promise<ConsoleWorkflow[]> {
  const response = await fetch(`${url}/api/workflows`);
  expect(response.status).toBe(200);
  return (await response.json()) as ConsoleWorkflow[];
}

async function latestRun(url: string, state: WorkflowRun['state']): Promise<WorkflowRun> {
  return (await eventually(
    async () => (await workflows(url))[0]!.runs[0],
    (run) => run?.state === state,
    30_000,
    `the latest run ${state}`,
  ))!;
}

describe('workflows in the web console over HTTP', () => {
  it('lists each workflow with its layers and runs, tells its runs moving, and acts on them', async () => {
    const namespace = uniqueNamespace('console-workflows');
    const url = await startConsole(namespace, true);
    const [nightly] = await eventually(
      () => workflows(url),
      (list) => list.length === 1,
      10_000,
      'the workflow stored by its instance',
    );
    expect(nightly).toEqual({
      name: 'nightly',
      steps: { extract: [], transform: ['extract'], audit: ['extract'], load: ['transform'] },
      layers: [['extract'], ['transform', 'audit'], ['load']],
      runs: [],
    });

    // The live stream names the workflow when its run moves (the watch follows `/.workflows` for the console).
    const controller = new AbortController();
    const stream = await fetch(`${url}/api/changes`, { signal: controller.signal });
    const reader = stream.body!.getReader();
    const received: string[] = [];
    void (async () => {
      const decoder = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        received.push(decoder.decode(value));
      }
    })().catch(() => undefined);
    await eventually(
      () => received.join(''),
      (text) => text.includes('"connected":true'),
      10_000,
      'the stream live',
    );

    // Actions need the page's token; with it, a run starts, and transform's item 1 fails it.
    expect((await fetch(`${url}/api/workflows/nightly/trigger`, { method: 'POST' })).status).toBe(403);
    const headers = await pageToken(url);
    failOnce.add('transform:1');
    const triggered = await fetch(`${url}/api/workflows/nightly/trigger`, { method: 'POST', headers });
    expect(triggered.status).toBe(200);
    const { runId } = (await triggered.json()) as { runId: string };
    const failed = await latestRun(url, 'FAILED');
    expect(failed.id).toBe(runId);
    expect(failed.steps.transform).toMatchObject({ state: 'FAILED', failedItems: [1] });
    expect(failed.steps.load!.state).toBe('PENDING');
    await eventually(
      () => received.join(''),
      (text) => text.includes('data: {"type":"workflows","workflows":["nightly"]}'),
      10_000,
      'a change naming the workflow',
    );

    // The failed step run again (its failed items): the run goes on and completes.
    const rerun = await fetch(`${url}/api/workflows/nightly/runs/${runId}/steps/transform/rerun`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ items: 'failed' }),
    });
    expect(rerun.status).toBe(200);
    expect(((await rerun.json()) as { done: string }).done).toBe(
      `step transform of run ${runId} runs again (its failed items)`,
    );
    const completed = await latestRun(url, 'COMPLETED');
    expect(completed.id).toBe(runId);
    expect(completed.steps.transform!.attempts).toBe(2);

    // A run failed again is cancelled: it ends CANCELLED.
    failOnce.add('transform:0');
    const second = (await (
      await fetch(`${url}/api/workflows/nightly/trigger`, { method: 'POST', headers })
    ).json()) as {
      runId: string;
    };
    await latestRun(url, 'FAILED');
    const cancel = await fetch(`${url}/api/workflows/nightly/runs/${second.runId}/cancel`, { method: 'POST', headers });
    expect(cancel.status).toBe(200);
    expect((await latestRun(url, 'CANCELLED')).id).toBe(second.runId);
    const all = (await (await fetch(`${url}/api/workflows/nightly/runs`)).json()) as WorkflowRun[];
    expect(all.map((run) => [run.id, run.state])).toEqual([
      [second.runId, 'CANCELLED'],
      [runId, 'COMPLETED'],
    ]);

    // The operator API's refusals, with their codes.
    const unknown = await fetch(`${url}/api/workflows/weekly/runs`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({
      code: 'WORKFLOW_NOT_FOUND',
      message: expect.stringMatching(/weekly/),
    });
    const noRun = await fetch(`${url}/api/workflows/nightly/runs/r-none/cancel`, { method: 'POST', headers });
    expect(noRun.status).toBe(404);
    expect(await noRun.json()).toMatchObject({
      code: 'WORKFLOW_RUN_NOT_FOUND',
      message: expect.stringMatching(/no run 'r-none' of 'nightly' is kept/),
    });
    const badStep = await fetch(`${url}/api/workflows/nightly/runs/${runId}/steps/transform/rerun`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ items: 'some' }),
    });
    expect(badStep.status).toBe(400);
    expect(await badStep.json()).toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringMatching(/items/) });
    controller.abort();
  });

  it('refuses the actions of a read-only console', async () => {
    const url = await startConsole(uniqueNamespace('console-workflows-ro'), false);
    await eventually(
      () => workflows(url),
      (list) => list.length === 1,
      10_000,
      'the workflow stored',
    );
    const headers = await pageToken(url);
    const refused = await fetch(`${url}/api/workflows/nightly/trigger`, { method: 'POST', headers });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toMatch(/read-only/);
    expect((await workflows(url))[0]!.runs).toEqual([]);
  });
});
