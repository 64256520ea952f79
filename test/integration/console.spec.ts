import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import {
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
  Injectable,
  Module,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ElasticJobModule,
  ElasticJobOperator,
  ElasticJobRegistry,
  JobConfigurationError,
  ShardedJob,
} from '../../lib/index.js';
import { CSRF_HEADER, ElasticJobConsoleModule, type ElasticJobConsoleOptions } from '../../lib/console/index.js';
import { resolveConsoleOptions } from '../../lib/console/console-options.js';
import { appOptions } from '../support/app.js';
import { eventually, startRegistry, uniqueNamespace } from '../support/zk.js';

/** The console's HTTP side against a real ZooKeeper: data, paging, live changes, security. (The page: browser test.) */

const apps: INestApplication[] = [];
afterEach(async () => {
  while (apps.length) await apps.pop()!.close();
});

@Injectable()
class ReportJobs {
  @ShardedJob({ jobName: 'report', cron: '0 0 3 * * *', timeZone: 'Europe/Berlin', shardingTotalCount: 4 })
  run(): void {}

  // Never due while a test runs: the job list's counts say that none has fired (it fired every 5 minutes, and a run
  // across one of them counted it sharded).
  @ShardedJob({ jobName: 'cleanup', cron: '0 30 4 1 1 *', shardingTotalCount: 2 })
  cleanup(): void {}
}

/** The app's own authentication, as a guard: an `x-user: admin` header. */
class AdminOnly implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-user'] === 'admin';
  }
}

async function startConsole(
  namespace: string,
  options: ElasticJobConsoleOptions,
  extra: { digest?: string; providers?: Type<unknown>[]; ip?: string } = {},
): Promise<{ url: string; app: INestApplication }> {
  @Module({
    imports: [
      ElasticJobModule.forRoot(
        appOptions(namespace, {
          ...(extra.digest ? { zookeeper: { ...appOptions(namespace).zookeeper, digest: extra.digest } } : {}),
          ...(extra.ip ? { instance: { ip: extra.ip } } : {}),
        }),
      ),
      ElasticJobConsoleModule.forRoot(options),
    ],
    providers: [ReportJobs, ...(extra.providers ?? [])],
  })
  class ConsoleApp {}
  const app = await NestFactory.create(ConsoleApp, { logger: ['error'] });
  apps.push(app);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, app };
}

async function json<T>(response: Response): Promise<T> {
  expect(response.headers.get('content-type')).toMatch(/application\/json/);
  return (await response.json()) as T;
}

/** What a browser holds after loading the page: the token in its HTML and the cookie beside it. */
async function loadPage(url: string): Promise<{ token: string; cookie: string }> {
  const response = await fetch(url);
  const token = /<meta name="elastic-job-csrf" content="([^"]+)">/.exec(await response.text())![1]!;
  const cookie = response.headers.get('set-cookie')!;
  expect(cookie).toBe(`elastic-job-csrf=${token}; HttpOnly; SameSite=Strict`);
  return { token, cookie: cookie.split(';')[0]! };
}

describe('web console over HTTP', () => {
  it('serves the page with its assets and security headers, and the jobs, paged and filtered', async () => {
    const namespace = uniqueNamespace('console');
    const { url, app } = await startConsole(namespace, {});
    const registry = app.get(ElasticJobRegistry);
    for (let i = 0; i < 60; i++) {
      await registry.addJob(
        { jobName: `bulk-${String(i).padStart(3, '0')}`, cron: '0 0 4 1 1 *', shardingTotalCount: 1 },
        () => undefined,
      );
    }

    const page = await fetch(`${url}/elastic-job`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'.*frame-ancestors 'none'/);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const html = await page.text();
    // Assets relative to the page, with or without its trailing slash.
    expect(html).toContain('<script src="elastic-job/console.js" defer></script>');
    expect(await (await fetch(`${url}/elastic-job/`)).text()).toContain('<script src="console.js" defer></script>');
    expect(html).toContain('<meta name="elastic-job-actions" content="false">');
    const script = await (await fetch(`${url}/elastic-job/console.js`)).text();
    expect(() => new Function(script)).not.toThrow(); // it parses as a browser script
    expect((await fetch(`${url}/elastic-job/console.css`)).headers.get('content-type')).toMatch(/text\/css/);

    const first = await json<{ total: number; jobs: Array<{ jobName: string; nextFireTime?: string }> }>(
      await fetch(`${url}/elastic-job/api/jobs?limit=50`),
    );
    expect(first.total).toBe(62);
    expect(first.jobs).toHaveLength(50);
    expect(first.jobs[0]!.jobName).toBe('bulk-000');
    const second = await json<{ jobs: Array<{ jobName: string }> }>(
      await fetch(`${url}/elastic-job/api/jobs?offset=50&limit=50`),
    );
    expect(second.jobs.map((job) => job.jobName)).toEqual([
      ...Array.from({ length: 10 }, (_, i) => `bulk-${String(50 + i).padStart(3, '0')}`),
      'cleanup',
      'report',
    ]);
    const filtered = await json<{
      total: number;
      jobs: Array<{ jobName: string; timeZone?: string; nextFireTime?: string }>;
    }>(await fetch(`${url}/elastic-job/api/jobs?name=REP`));
    expect(filtered.jobs.map((job) => job.jobName)).toEqual(['report']);
    expect(filtered.jobs[0]!.timeZone).toBe('Europe/Berlin');
    // 03:00 in Berlin is 01:00 or 02:00 UTC.
    expect(filtered.jobs[0]!.nextFireTime).toMatch(/T0[12]:00:00.000Z$/);
    expect((await fetch(`${url}/elastic-job/api/jobs?limit=0`)).status).toBe(400);
    expect((await fetch(`${url}/elastic-job/api/jobs?name=a&name=b`)).status).toBe(400);
    expect((await fetch(`${url}/elastic-job/api/jobs?status=GREEN`)).status).toBe(400);

    // A status filter, after a job is disabled (the watch tells the console which job to read again).
    await app.get(ElasticJobOperator).disable({ jobName: 'bulk-007' });
    const disabled = await eventually(
      async () =>
        json<{ total: number; counts: Record<string, number>; jobs: Array<{ jobName: string }> }>(
          await fetch(`${url}/elastic-job/api/jobs?status=DISABLED`),
        ),
      (result) => result.total === 1,
      10_000,
      'the disabled job in the DISABLED filter',
    );
    expect(disabled.jobs.map((job) => job.jobName)).toEqual(['bulk-007']);
    // Not fired yet, the others are sharded all the same: the leader shards once registered (issue 43).
    await eventually(
      async () =>
        (await json<{ counts: Record<string, number> }>(await fetch(`${url}/elastic-job/api/jobs?status=DISABLED`)))
          .counts,
      (counts) => counts.OK === 61,
      10_000,
      'every other job sharded',
    );
    expect(
      (await json<{ counts: Record<string, number> }>(await fetch(`${url}/elastic-job/api/jobs?status=DISABLED`)))
        .counts,
    ).toEqual({ OK: 61, CRASHED: 0, DISABLED: 1, SHARDING_FLAG: 0 });
    expect((await fetch(`${url}/elastic-job/api/jobs/nope`)).status).toBe(404);
  });

  it('shows a job: items with owners, servers with their status; read-only by default', async () => {
    const namespace = uniqueNamespace('console-detail');
    const { url, app } = await startConsole(namespace, {}, { ip: '127.0.0.3' });
    const { app: peer } = await startConsole(namespace, {}, { ip: '127.0.0.2' });
    const operator = app.get(ElasticJobOperator);
    // The server listed second in ZooKeeper's order is disabled: statuses must follow their servers when sorted.
    await operator.disable({ jobName: 'report', serverIp: '127.0.0.3' });
    await app.get(ElasticJobRegistry).trigger('report');
    const owner = peer.get(ElasticJobRegistry).getJobStatus('report').instanceId;
    const detail = await eventually(
      async () =>
        json<{ sharding: Array<{ item: number; instanceId?: string; status: string }>; servers: unknown[] }>(
          await fetch(`${url}/elastic-job/api/jobs/report`),
        ),
      (result) => result.sharding.length === 4 && result.sharding.every((item) => item.instanceId === owner),
      15_000,
      'the items sharded to the enabled server',
    );
    const disabledOne = app.get(ElasticJobRegistry).getJobStatus('report').instanceId;
    expect(detail.servers).toEqual([
      { serverIp: '127.0.0.2', status: 'ENABLED', instances: [owner] },
      { serverIp: '127.0.0.3', status: 'DISABLED', instances: [disabledOne] },
    ]);
    const refused = await fetch(`${url}/elastic-job/api/jobs/report/items/2/disable`, { method: 'POST' });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toMatch(/read-only: actions are off/);
  });

  it('actions: need the page token and its cookie, refuse other sites, and do what they say', async () => {
    const namespace = uniqueNamespace('console-actions');
    const { url, app } = await startConsole(namespace, { actions: true, path: 'ops/jobs' });
    const { token, cookie } = await loadPage(`${url}/ops/jobs`);
    const post = (path: string, headers: Record<string, string>) =>
      fetch(`${url}/ops/jobs/api/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{}',
      });
    const disable = 'jobs/report/items/2/disable';
    expect((await post(disable, {})).status).toBe(403);
    expect((await post(disable, { cookie })).status).toBe(403); // no header: another site's form
    expect((await post(disable, { 'x-elastic-job-csrf': token })).status).toBe(403); // no cookie
    const other = (await loadPage(`${url}/ops/jobs`)).token; // another browser's
    expect((await post(disable, { cookie, [CSRF_HEADER]: other })).status).toBe(403);
    expect((await post(disable, { cookie, [CSRF_HEADER]: token, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await post(disable, { cookie, [CSRF_HEADER]: token, 'sec-fetch-site': 'same-site' })).status).toBe(403);
    expect((await post(disable, { cookie, [CSRF_HEADER]: token, origin: 'https://evil.example' })).status).toBe(403);
    const operator = app.get(ElasticJobOperator);
    expect((await operator.getShardingInfo('report')).find((item) => item.item === 2)?.status).not.toBe('DISABLED');

    const done = await post(disable, { cookie, [CSRF_HEADER]: token, 'sec-fetch-site': 'same-origin' });
    expect(done.status).toBe(200);
    expect(await done.json()).toEqual({ done: 'disabled item 2 of report' });
    expect((await operator.getShardingInfo('report')).find((item) => item.item === 2)?.status).toBe('DISABLED');
    // A page loaded again in the same browser keeps its token: tabs opened earlier go on working.
    const again = await fetch(`${url}/ops/jobs/`, { headers: { cookie } });
    expect(await again.text()).toContain(`content="${token}"`);
    const valid = { cookie, [CSRF_HEADER]: token };
    const missing = await post('jobs/nope/trigger', valid);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { message: string }).message).toMatch(/No job named 'nope'/);
    expect((await post('jobs/report/items/9/disable', valid)).status).toBe(400);
    expect(await (await post('jobs/cleanup/trigger', valid)).json()).toMatchObject({
      done: 'triggered on 1 instance(s)',
    });
  });

  it('pushes ZooKeeper changes to the page as they happen (server-sent events)', async () => {
    const namespace = uniqueNamespace('console-live');
    const { url, app } = await startConsole(namespace, {});
    const controller = new AbortController();
    const response = await fetch(`${url}/elastic-job/api/changes`, { signal: controller.signal });
    expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
    const reader = response.body!.getReader();
    const received: string[] = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        received.push(decoder.decode(value));
      }
    })().catch(() => undefined);
    // The stream's first event says the watch is there.
    await eventually(
      () => received.join(''),
      (text) => text.includes('data: {"type":"connection","connected":true}'),
      10_000,
      'the stream saying it is live',
    );
    // Another tool (a Java ElasticJob instance, an operator's zkCli) sets a job up: nothing of this app touches it,
    // so an event naming it can only come from the watch.
    const other = await startRegistry({ namespace });
    await other.createWithParents(
      '/java-job/config',
      Buffer.from('cron: 0 0 3 * * ?\nshardingTotalCount: 1\n'),
      'PERSISTENT',
    );
    await other.close();
    await eventually(
      () => received.join(''),
      (text) => /data: \{"type":"jobs","jobNames":\[[^\]]*"java-job"/.test(text),
      10_000,
      'a change event naming the job',
    );
    // The app shuts down with the page still open: the stream ends, and close() does not wait for the browser.
    apps.splice(apps.indexOf(app), 1);
    await app.close();
    await reading;
    controller.abort();
  });

  it('guards every route with the app guard; keeps secrets out of every answer', async () => {
    const namespace = uniqueNamespace('console-guard');
    const digest = 'console-user:s3cret-digest';
    const { url } = await startConsole(namespace, { guard: AdminOnly, actions: true }, { digest });
    for (const path of [
      '',
      '/console.js',
      '/console.css',
      '/api/jobs',
      '/api/jobs/report',
      '/api/servers',
      '/api/changes',
    ])
      expect((await fetch(`${url}/elastic-job${path}`)).status, path).toBe(403);
    // An action with a valid token and cookie is still the app guard's to refuse.
    const page = await fetch(`${url}/elastic-job`, { headers: { 'x-user': 'admin' } });
    const token = /content="([A-Za-z0-9_-]{32})"/.exec(await page.text())![1]!;
    const cookie = page.headers.get('set-cookie')!.split(';')[0]!;
    const action = { method: 'POST', headers: { cookie, [CSRF_HEADER]: token } };
    expect((await fetch(`${url}/elastic-job/api/jobs/report/trigger`, action)).status).toBe(403);
    const admitted = { ...action, headers: { ...action.headers, 'x-user': 'admin' } };
    expect((await fetch(`${url}/elastic-job/api/jobs/report/trigger`, admitted)).status).toBe(200);
    const admin = { 'x-user': 'admin' };
    const answers = await Promise.all(
      ['', '/console.js', '/api/jobs', '/api/jobs/report', '/api/servers', '/api/executions'].map(async (path) => {
        const response = await fetch(`${url}/elastic-job${path}`, { headers: admin });
        expect(response.status, path).toBe(200);
        return response.text();
      }),
    );
    for (const text of answers) {
      expect(text).not.toContain('s3cret');
      expect(text).not.toContain(digest);
    }
    // No tracing store: the executions come from the instances' in-memory logs (this app's one instance).
    expect(JSON.parse(answers[5]!)).toMatchObject({ enabled: true, source: 'cluster', missing: [] });
    expect(JSON.parse(answers[5]!).answered).toHaveLength(1);
  });

  it('refuses bad options at forRoot(), before anything runs', () => {
    expect(() => resolveConsoleOptions({ actions: true }, { NODE_ENV: 'production' })).toThrow(JobConfigurationError);
    expect(() => resolveConsoleOptions({ actions: true }, { NODE_ENV: 'production' })).toThrow(
      /^ElasticJobConsoleModule options: invalid 'console.guard': actions are enabled in production .* with no guard/,
    );
    expect(resolveConsoleOptions({ actions: true, guard: new AdminOnly() }, { NODE_ENV: 'production' }).actions).toBe(
      true,
    );
    expect(() => resolveConsoleOptions({ path: '../x' })).toThrow(/invalid 'console.path'/);
    expect(() => resolveConsoleOptions({ guard: {} as CanActivate })).toThrow(/invalid 'console.guard'/);
    expect(() => ElasticJobConsoleModule.forRoot({ actions: 'yes' as unknown as boolean })).toThrow(
      /invalid 'console.actions': must be true or false/,
    );
  });

  it('refuses an executionHistory that is not there or not one', async () => {
    const namespace = uniqueNamespace('console-history');
    class NotHistory {}
    await expect(startConsole(namespace, { executionHistory: 'missing-token' })).rejects.toThrow(
      /invalid 'console.executionHistory': no provider missing-token/,
    );
    await expect(
      startConsole(uniqueNamespace('console-history'), { executionHistory: NotHistory }, { providers: [NotHistory] }),
    ).rejects.toThrow(/has no recentExecutions/);
  });
});
