import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable, Logger } from '@nestjs/common';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type ElasticJobEvent,
  type ElasticJobModuleOptions,
  ElasticJobRegistry,
  JobConfigurationError,
  OnElasticJobEvent,
  type TypedJobOptions,
} from '../../lib/index.js';
import { Writable } from 'node:stream';
import { runCli } from '../../lib/cli/run.js';
import { ElasticJobOperator } from '../../lib/index.js';
import { appOptions, bootApp } from '../support/app.js';
import { javaReads } from '../support/java-config-peer.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * ElasticJob's typed jobs against a real ZooKeeper: HTTP items against a real HTTP server (the shardingContext
 * header's JSON parsed per item, bodies, status failures, timeouts) and SCRIPT items running a real script (words with
 * quotes and spaces, the context as last argument, exit codes, the opt-in, a kill at shutdown). The config node holds
 * `props` as Java keeps it and the root node the type.
 */

afterEach(async () => {
  await releaseAll();
  vi.restoreAllMocks();
});

const completed: Array<Extract<ElasticJobEvent, { type: 'item.completed' }>> = [];
@Injectable()
class Completions {
  @OnElasticJobEvent('item.completed')
  record(event: ElasticJobEvent): void {
    if (event.type === 'item.completed') completed.push(event);
  }
}

interface Received {
  method: string;
  path: string;
  context: Record<string, unknown>;
  contentType: string | undefined;
  body: string;
}
const received: Received[] = [];
let server: Server;
let base = '';
/** Requests to /hang whose client went away before an answer. */
const hangsAborted: string[] = [];

beforeAll(async () => {
  server = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const context = JSON.parse(String(request.headers.shardingcontext)) as Record<string, unknown>;
      received.push({
        method: request.method!,
        path: request.url!,
        context,
        contentType: request.headers['content-type'],
        body,
      });
      if (request.url === '/slow') return void setTimeout(() => response.end('late'), 2000);
      // Never answered: the client's abort is what ends it.
      if (request.url === '/hang') return void response.on('close', () => hangsAborted.push(request.url!));
      if (request.url === '/flaky' && context.shardingItem === 1) {
        response.statusCode = 503;
        return void response.end(`warehouse down ${'x'.repeat(10_000)}`);
      }
      response.end(`ok ${String(context.shardingItem)}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function boot(
  jobs: TypedJobOptions[],
  extra: Partial<ElasticJobModuleOptions> = {},
): Promise<{ registry: ElasticJobRegistry; namespace: string }> {
  const namespace = uniqueNamespace('typed');
  completed.length = 0;
  received.length = 0;
  const app = await bootApp({ ...appOptions(namespace), jobs, ...extra } as ElasticJobModuleOptions, [Completions]);
  hold(() => app.close());
  return { registry: app.get(ElasticJobRegistry), namespace };
}

const YEARLY = '0 0 3 1 1 ?';

describe('HTTP jobs', () => {
  it('call the URI once per item with the shardingContext header and the body; stored with props, typed HTTP', async () => {
    const { registry, namespace } = await boot([
      {
        jobName: 'ping',
        type: 'HTTP',
        cron: YEARLY,
        shardingTotalCount: 3,
        shardingItemParameters: '0=a,1=b,2=c',
        jobParameter: 'nightly',
        props: {
          'http.uri': `${base}/ping?from=test`,
          'http.method': 'POST',
          'http.data': 'region=eu',
          'http.content.type': 'application/x-www-form-urlencoded',
        },
      },
    ]);
    await registry.trigger('ping');
    await eventually(
      () => completed.length,
      (n) => n === 3,
      15_000,
      'three items',
    );
    const instanceId = registry.getJobStatus('ping').instanceId;
    expect(received.map((request) => request.context.shardingItem).sort()).toEqual([0, 1, 2]);
    for (const request of received) {
      const item = request.context.shardingItem as number;
      expect(request).toMatchObject({
        method: 'POST',
        path: '/ping?from=test',
        contentType: 'application/x-www-form-urlencoded',
        body: 'region=eu',
      });
      expect(request.context).toEqual({
        jobName: 'ping',
        taskId: `ping@-@0,1,2@-@READY@-@${instanceId}`,
        shardingTotalCount: 3,
        jobParameter: 'nightly',
        shardingItem: item,
        shardingParameter: ['a', 'b', 'c'][item],
      });
    }
    expect(completed.every((event) => event.success)).toBe(true);
    // The config node keeps the props as Java's Properties; the root node names the type, as Java stores it.
    const zk = await observer(namespace);
    const config = (await zk.getData('/ping/config'))!.data.toString('utf8');
    expect(config).toContain(`props:\n  http.content.type: application/x-www-form-urlencoded\n`);
    expect((await zk.getData('/ping'))!.data.toString('utf8')).toBe('HTTP');
    expect((await javaReads([config]))[0]).toMatchObject({ fields: { jobName: 'ping', shardingTotalCount: 3 } });
    // What operators see: the API's configuration, the CLI's config lines.
    const operator = await ElasticJobOperator.connect({ serverLists: zkConnect(), namespace });
    hold(() => operator.close());
    expect((await operator.getJobConfiguration('ping'))?.props).toMatchObject({ 'http.method': 'POST' });
    let printed = '';
    const out = new Writable({
      write(chunk: Buffer, _encoding, done) {
        printed += chunk.toString('utf8');
        done();
      },
    });
    expect(
      await runCli(['--zk', zkConnect(), '--namespace', namespace, 'config', 'ping'], {
        stdout: out,
        stderr: out,
        env: {},
      }),
    ).toBe(0);
    expect(printed).toMatch(/^props\.http\.uri: +http:\/\/127\.0\.0\.1:\d+\/ping\?from=test$/m);
    // Changed as a whole set, validated as declared ones: the API, then the CLI's --set.
    await expect(
      operator.updateJobConfiguration('ping', { props: { 'http.uri': `${base}/x`, 'http.method': 7 as never } }),
    ).rejects.toThrow(/props\.http\.method/);
    await operator.updateJobConfiguration('ping', { props: { 'http.uri': `${base}/moved`, 'http.method': 'GET' } });
    expect((await zk.getData('/ping/config'))!.data.toString('utf8')).toContain(`  http.uri: ${base}/moved\n`);
    const set = JSON.stringify({ 'http.uri': `${base}/cli`, 'http.method': 'PUT' });
    expect(
      await runCli(['--zk', zkConnect(), '--namespace', namespace, 'config', 'ping', '--set', `props=${set}`], {
        stdout: out,
        stderr: out,
        env: {},
      }),
    ).toBe(0);
    received.length = 0;
    await registry.trigger('ping');
    await eventually(
      () => received.length,
      (n) => n === 3,
      15_000,
      'the requests with the new props',
    );
    expect(received.every((request) => request.method === 'PUT' && request.path === '/cli')).toBe(true);
  });

  it('fail an item on a status of 400 or more (its body, bounded, in the failure), or log it as ElasticJob does', async () => {
    const { registry } = await boot([
      {
        jobName: 'flaky',
        type: 'HTTP',
        cron: YEARLY,
        shardingTotalCount: 2,
        props: { 'http.uri': `${base}/flaky`, 'http.method': 'GET' },
      },
      {
        jobName: 'lenient',
        type: 'HTTP',
        cron: YEARLY,
        shardingTotalCount: 2,
        props: { 'http.uri': `${base}/flaky`, 'http.method': 'GET', 'http.fail.on.status': 'false' },
      },
    ]);
    vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    await registry.trigger('flaky');
    await registry.trigger('lenient');
    await eventually(
      () => completed.length,
      (n) => n === 4,
      15_000,
      'four items',
    );
    const failed = completed.filter((event) => !event.success);
    expect(failed.map((event) => [event.jobName, event.shardingItem])).toEqual([['flaky', 1]]);
    expect(failed[0]!.failureCause).toContain(`GET ${base}/flaky answered 503: warehouse down xxx`);
    expect(failed[0]!.failureCause!.length).toBeLessThan(4096 + 1000); // the body cut to 4 KB
    expect(received.every((request) => request.body === '')).toBe(true); // no body on a GET
  });

  it('time out at connect + read timeout, and refuse bad props with the item failing, naming the prop', async () => {
    const { registry } = await boot([
      {
        jobName: 'slow',
        type: 'HTTP',
        cron: YEARLY,
        shardingTotalCount: 1,
        props: {
          'http.uri': `${base}/slow`,
          'http.method': 'GET',
          'http.connect.timeout.milliseconds': '100',
          'http.read.timeout.milliseconds': '200',
        },
      },
      { jobName: 'no-uri', type: 'HTTP', cron: YEARLY, shardingTotalCount: 1, props: { 'http.method': 'GET' } },
    ]);
    vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    await registry.trigger('slow');
    await registry.trigger('no-uri');
    await eventually(
      () => completed.length,
      (n) => n === 2,
      15_000,
      'both items',
    );
    const cause = (job: string) => completed.find((event) => event.jobName === job)!.failureCause;
    expect(cause('slow')).toContain(`GET ${base}/slow timed out after 300 ms`);
    expect(cause('no-uri')).toContain(`props 'http.uri' is required`);
  });

  it("abort the request at the item's timeout (itemTimeoutMilliseconds, docs/guide/item-policies.md)", async () => {
    const { registry } = await boot([
      {
        jobName: 'hang',
        type: 'HTTP',
        cron: YEARLY,
        shardingTotalCount: 1,
        itemTimeoutMilliseconds: 300,
        props: { 'http.uri': `${base}/hang`, 'http.method': 'GET', 'http.read.timeout.milliseconds': '600000' },
      },
    ]);
    vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    await registry.trigger('hang');
    const failed = await eventually(
      () => completed.find((event) => event.jobName === 'hang'),
      (event) => event !== undefined,
      15_000,
      'the timed-out item',
    );
    expect(failed).toMatchObject({ success: false, failureCause: expect.stringMatching(/ItemTimeoutError/) });
    await eventually(
      () => hangsAborted.length,
      (n) => n === 1,
      10_000,
      'the request aborted',
    );
  });

  it('join a job a Java team stored, declared by { jobName, type } alone: its props and count from ZooKeeper', async () => {
    const namespace = uniqueNamespace('typed-join');
    const zk = await observer(namespace);
    // As Java ElasticJob stores an HTTP job (ScheduleJobBootstrap(registry, "HTTP", config)): the type in the root
    // node, the props in the config node.
    const javaYaml = [
      'cron: 0 0 3 1 1 ?',
      'jobName: shared',
      'props:',
      '  http.method: POST',
      `  http.uri: ${base}/shared`,
      'shardingTotalCount: 4',
      '',
    ].join('\n');
    expect((await javaReads([javaYaml]))[0]).toMatchObject({ fields: { jobName: 'shared', shardingTotalCount: 4 } });
    await zk.create('/shared', Buffer.from('HTTP'));
    await zk.create('/shared/config', Buffer.from(javaYaml));
    completed.length = 0;
    received.length = 0;
    const app = await bootApp(
      { ...appOptions(namespace), jobs: [{ jobName: 'shared', type: 'HTTP' }] } as ElasticJobModuleOptions,
      [Completions],
    );
    hold(() => app.close());
    const registry = app.get(ElasticJobRegistry);
    await registry.trigger('shared');
    await eventually(
      () => received.length,
      (n) => n === 4,
      15_000,
      'four requests',
    );
    expect(received.map((request) => [request.method, request.path, request.context.shardingTotalCount])).toEqual(
      Array.from({ length: 4 }, () => ['POST', '/shared', 4]),
    );
    // Nothing of ours was written over the stored job.
    expect((await zk.getData('/shared/config'))!.data.toString('utf8')).toBe(javaYaml);
    expect((await zk.getData('/shared'))!.data.toString('utf8')).toBe('HTTP');
    // With nothing stored, there is nothing to join.
    await expect(registry.addJob({ jobName: 'ghost', type: 'HTTP' })).rejects.toThrow(/none is stored there yet/);
    expect(await zk.exists('/ghost')).toBeUndefined(); // nothing of it written
  });

  it('are added at run time too, and refuse a type that is not one', async () => {
    const { registry } = await boot([]);
    await registry.addJob({
      jobName: 'added',
      type: 'HTTP',
      cron: YEARLY,
      shardingTotalCount: 1,
      props: { 'http.uri': `${base}/added`, 'http.method': 'PUT' },
    });
    await registry.trigger('added');
    await eventually(
      () => received.length,
      (n) => n === 1,
      15_000,
      'the request',
    );
    expect(received[0]).toMatchObject({ method: 'PUT', path: '/added' });
    await expect(
      registry.addJob({ jobName: 'odd', type: 'FTP' as 'HTTP', cron: YEARLY, shardingTotalCount: 1 }),
    ).rejects.toThrow(JobConfigurationError);
  });
});

describe('SCRIPT jobs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'script-jobs-'));
  const script = join(dir, 'record.mjs');
  // Each run writes its arguments (NUL-separated) to a file of its own; item 1 exits 3; jobParameter 'sleep' sleeps.
  writeFileSync(
    script,
    [
      "import { writeFileSync } from 'node:fs';",
      'const context = JSON.parse(process.argv.at(-1));',
      `writeFileSync(${JSON.stringify(dir)} + '/run-' + process.pid, process.argv.slice(2).join('\\0'));`,
      "if (context.jobParameter === 'sleep') setTimeout(() => {}, 60_000);",
      "else if (context.shardingItem === 1) { process.stderr.write('no ledger for item 1'); process.exit(3); }",
      "else process.stdout.write('done ' + context.shardingItem);",
    ].join('\n'),
  );
  const runs = (): string[][] =>
    readdirSync(dir)
      .filter((name) => name.startsWith('run-'))
      .map((name) => readFileSync(join(dir, name), 'utf8').split('\0'));
  const job = (jobName: string): TypedJobOptions => ({
    jobName,
    type: 'SCRIPT',
    cron: YEARLY,
    shardingTotalCount: 3,
    props: { 'script.command.line': `node ${script} 'hello world' "it's" plain\\ word` },
  });

  it('run the command without a shell, words as a shell splits them, the context JSON last; a non-zero exit fails', async () => {
    const { registry } = await boot([job('ledger')], { scriptJobs: { allow: ['node'] } });
    vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const before = runs().length;
    await registry.trigger('ledger');
    await eventually(
      () => completed.length,
      (n) => n === 3,
      15_000,
      'three items',
    );
    const mine = runs().slice(before);
    expect(mine).toHaveLength(3);
    for (const args of mine) {
      expect(args.slice(0, 3)).toEqual(['hello world', "it's", 'plain word']);
      expect(JSON.parse(args[3]!)).toMatchObject({ jobName: 'ledger', shardingTotalCount: 3, jobParameter: '' });
    }
    const failed = completed.filter((event) => !event.success);
    expect(failed.map((event) => event.shardingItem)).toEqual([1]);
    expect(failed[0]!.failureCause).toContain(`'node' exited with 3; stderr: no ledger for item 1`);
  });

  it('are off unless the app allows them: not registered here (said loudly), and refused at run time', async () => {
    const errors = vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const { registry } = await boot([job('ledger')]);
    expect(registry.getJobNames()).toEqual([]);
    expect(errors.mock.calls.map((call) => String(call[0])).join('\n')).toMatch(
      /this instance may not run 'node' .*scriptJobs: false.*not registered on this instance/,
    );
    await expect(registry.addJob(job('ledger'))).rejects.toThrow(/scriptJobs/);
    const listed = await boot([], { scriptJobs: { allow: ['/usr/bin/env'] } });
    await expect(listed.registry.addJob(job('ledger'))).rejects.toThrow(/may not run 'node'/);
  });

  it("kill the script at the item's timeout (itemTimeoutMilliseconds, docs/guide/item-policies.md)", async () => {
    const { registry } = await boot([{ ...job('slow'), shardingTotalCount: 1, itemTimeoutMilliseconds: 4000 }], {
      scriptJobs: { allow: true },
    });
    const before = new Set(readdirSync(dir));
    await registry.trigger('slow', { jobParameter: 'sleep' });
    // Running first (the timeout is long enough for node to start and write its file), then killed at the timeout.
    const started = await eventually(
      () => readdirSync(dir).filter((name) => !before.has(name)),
      (names) => names.length === 1,
      15_000,
      'the script running',
    );
    const failed = await eventually(
      () => completed.find((event) => event.jobName === 'slow'),
      (event) => event !== undefined,
      15_000,
      'the timed-out item',
    );
    expect(failed).toMatchObject({ success: false, failureCause: expect.stringMatching(/ItemTimeoutError/) });
    const pid = Number(started[0]!.slice('run-'.length));
    await eventually(
      () => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      },
      (gone) => gone,
      10_000,
      'the script killed',
    );
  });

  it('kill the script when the app shuts down', async () => {
    const namespace = uniqueNamespace('typed-kill');
    completed.length = 0;
    const app = await bootApp(
      {
        ...appOptions(namespace, { shutdownTimeoutMilliseconds: 500 }),
        jobs: [{ ...job('sleeper'), shardingTotalCount: 1 }],
        scriptJobs: { allow: true },
      } as ElasticJobModuleOptions,
      [Completions],
    );
    const registry = app.get(ElasticJobRegistry);
    const before = new Set(readdirSync(dir));
    await registry.trigger('sleeper', { jobParameter: 'sleep' });
    const started = await eventually(
      () => readdirSync(dir).filter((name) => !before.has(name)),
      (names) => names.length === 1,
      15_000,
      'the script running',
    );
    const pid = Number(started[0]!.slice('run-'.length));
    expect(() => process.kill(pid, 0)).not.toThrow(); // it runs
    vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    await app.close();
    await eventually(
      () => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      },
      (gone) => gone,
      10_000,
      'the script killed',
    );
  });
});
