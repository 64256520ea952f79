import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { type INestApplication, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { afterEach, describe, expect, it } from 'vitest';
import { ElasticJobModule, ShardedJob } from '../../lib/index.js';
import { CSRF_HEADER, ElasticJobConsoleModule, type ElasticJobConsoleOptions } from '../../lib/console/index.js';
import { resolveConsoleOptions } from '../../lib/console/console-options.js';
import { appOptions } from '../support/app.js';
import { eventually, startRegistry, uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * Several registries in one console (ElasticJob-UI connects to several): another namespace shown with `?registry=`,
 * read-only unless its entry says `actions: true`, against a real ZooKeeper and a second app in that namespace.
 */

const apps: INestApplication[] = [];
afterEach(async () => {
  while (apps.length) await apps.pop()!.close();
});

@Injectable()
class ReportJob {
  @ShardedJob({ jobName: 'report', cron: '0 0 3 * * *', shardingTotalCount: 2 })
  run(): void {}
}

@Injectable()
class AuditJob {
  @ShardedJob({ jobName: 'audit', cron: '0 0 4 * * *', shardingTotalCount: 3 })
  run(): void {}
}

async function start(
  namespace: string,
  providers: Array<typeof ReportJob>,
  console?: ElasticJobConsoleOptions,
): Promise<string> {
  @Module({
    imports: [
      ElasticJobModule.forRoot(appOptions(namespace)),
      ...(console ? [ElasticJobConsoleModule.forRoot(console)] : []),
    ],
    providers,
  })
  class App {}
  const app = console
    ? await NestFactory.create(App, { logger: ['error'] })
    : await NestFactory.create(App, { logger: false });
  apps.push(app);
  await app.listen(0, '127.0.0.1');
  return `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/elastic-job`;
}

describe('console over several registries', () => {
  it('lists them, shows another namespace with ?registry=, and acts there only where its entry allows', async () => {
    const [own, other] = [uniqueNamespace('console-own'), uniqueNamespace('console-other')];
    await start(other, [AuditJob]);
    const url = await start(own, [ReportJob], {
      actions: true,
      registries: [
        { name: 'billing', serverLists: zkConnect(), namespace: other },
        { name: 'billing-ops', serverLists: zkConnect(), namespace: other, actions: true },
      ],
    });
    const get = async (path: string) => {
      const response = await fetch(`${url}/api/${path}`);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> & unknown[] };
    };
    expect((await get('registries')).body).toEqual([
      { name: 'app', namespace: own, own: true, actions: true },
      { name: 'billing', namespace: other, own: false, actions: false },
      { name: 'billing-ops', namespace: other, own: false, actions: true },
    ]);
    const names = (answer: { body: unknown }) =>
      (answer.body as { jobs: Array<{ jobName: string }> }).jobs.map((job) => job.jobName);
    expect(names(await get('jobs'))).toEqual(['report']);
    await eventually(
      async () => names(await get('jobs?registry=billing')),
      (jobs) => jobs.length === 1,
      10_000,
      "the other namespace's job",
    );
    expect(names(await get('jobs?registry=billing'))).toEqual(['audit']);
    expect((await get('jobs/audit?registry=billing')).body).toMatchObject({ job: { jobName: 'audit' } });
    expect((await get('jobs/audit')).status).toBe(404); // not in the app's own namespace
    const unknown = await get('jobs?registry=nowhere');
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toMatch(/no registry 'nowhere'; the console has app, billing, billing-ops/);
    // The executions of the other namespace come from its instances.
    expect((await get('executions?registry=billing')).body).toMatchObject({ source: 'cluster', missing: [] });
    // Asking them writes query nodes: not at another site's request (an image, a link).
    for (const route of ['executions', 'failures'])
      expect((await fetch(`${url}/api/${route}`, { headers: { 'sec-fetch-site': 'cross-site' } })).status).toBe(403);

    // Actions: refused on a read-only entry, done on the one that allows them.
    const page = await fetch(url);
    const token = /name="elastic-job-csrf" content="([^"]+)"/.exec(await page.text())![1]!;
    const cookie = page.headers.get('set-cookie')!.split(';')[0]!;
    const put = (registry: string) =>
      fetch(`${url}/api/jobs/audit/config?registry=${registry}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', cookie, [CSRF_HEADER]: token },
        body: JSON.stringify({ jobParameter: 'from the other console' }),
      });
    const zk = await startRegistry({ namespace: other });
    try {
      const before = (await zk.getData('/audit/config'))!.stat.version;
      const refused = await put('billing');
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { message: string }).message).toMatch(/'billing' is read-only/);
      expect((await zk.getData('/audit/config'))!.stat.version).toBe(before);
      expect((await put('billing-ops')).status).toBe(200);
      expect((await zk.getData('/audit/config'))!.data.toString()).toContain("jobParameter: 'from the other console'");
    } finally {
      await zk.close();
    }
  });

  it('refuses bad registries at forRoot()', () => {
    const entry = { name: 'billing', serverLists: zkConnect(), namespace: 'billing' };
    expect(() => resolveConsoleOptions({ registries: [{ ...entry, name: 'app' }] })).toThrow(/registries\[0\]\.name/);
    expect(() => resolveConsoleOptions({ registries: [entry, entry] })).toThrow(/'billing' is taken/);
    expect(() => resolveConsoleOptions({ registries: [{ ...entry, name: 'a b' }] })).toThrow(/letters, digits/);
    expect(() => resolveConsoleOptions({ registries: [{ ...entry, namespace: '' }] })).toThrow(/registries\[0\]/);
    expect(() => resolveConsoleOptions({ registries: [{ ...entry, actions: 'yes' as never }] })).toThrow(
      /registries\[0\]\.actions/,
    );
    expect(() => resolveConsoleOptions({ registries: [{ ...entry, url: 'x' } as never] })).toThrow(/is not an option/);
    // ZK_CONNECT is the app's registry, never another one's servers.
    const { serverLists: _servers, ...withoutServers } = entry;
    expect(() => resolveConsoleOptions({ registries: [withoutServers as never] })).toThrow(
      /registries\[0\]\.serverLists.*is required/,
    );
  });
});
