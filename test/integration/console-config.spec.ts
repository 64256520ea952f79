import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { type CanActivate, type ExecutionContext, type INestApplication, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ElasticJobEvent,
  ElasticJobModule,
  ElasticJobRegistry,
  OnElasticJobEvent,
  ShardedJob,
} from '../../lib/index.js';
import { CSRF_HEADER, ElasticJobConsoleModule } from '../../lib/console/index.js';
import { appOptions } from '../support/app.js';
import { javaReads } from '../support/java-config-peer.js';
import { eventually, startRegistry, uniqueNamespace } from '../support/zk.js';

/**
 * The console's configuration editor over HTTP, against a real ZooKeeper: `PUT api/jobs/:name/config` writes what
 * ElasticJob's JobConfigurationAPI writes (read back from the node), refuses what `@ShardedJob()` refuses with nothing
 * written, and tells who changed what; `GET api/cron` answers the next fire times or the job's refusal.
 */

const apps: INestApplication[] = [];
afterEach(async () => {
  while (apps.length) await apps.pop()!.close();
});

@Injectable()
class ReportJob {
  @ShardedJob({ jobName: 'report', cron: '0 0 3 * * *', timeZone: 'Etc/GMT-8', shardingTotalCount: 4 })
  run(): void {}
}

const audit: ElasticJobEvent[] = [];
@Injectable()
class AuditTrail {
  @OnElasticJobEvent('config.changed')
  record(event: ElasticJobEvent): void {
    audit.push(event);
  }
}

/** The app's authentication: the `x-user` header becomes `request.user`, as Passport leaves it. */
class SignedIn implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string>; user?: unknown }>();
    if (request.headers['x-user']) request.user = { username: request.headers['x-user'] };
    return true;
  }
}

async function start(namespace: string): Promise<{ url: string; app: INestApplication }> {
  @Module({
    imports: [
      ElasticJobModule.forRoot(appOptions(namespace)),
      ElasticJobConsoleModule.forRoot({ actions: true, guard: new SignedIn() }),
    ],
    providers: [ReportJob, AuditTrail],
  })
  class ConsoleApp {}
  const app = await NestFactory.create(ConsoleApp, { logger: ['error'] });
  apps.push(app);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/elastic-job`, app };
}

async function session(url: string): Promise<(path: string, body: unknown, user?: string) => Promise<Response>> {
  const page = await fetch(url);
  const token = /name="elastic-job-csrf" content="([^"]+)"/.exec(await page.text())![1]!;
  const cookie = page.headers.get('set-cookie')!.split(';')[0]!;
  return (path, body, user) =>
    fetch(`${url}/api/${path}`, {
      method: 'PUT',
      headers: {
        'content-type': 'application/json',
        cookie,
        [CSRF_HEADER]: token,
        ...(user ? { 'x-user': user } : {}),
      },
      body: JSON.stringify(body),
    });
}

describe('console configuration editing', () => {
  it('writes the fields as ElasticJob stores them, the running job follows, and the change is audited', async () => {
    const namespace = uniqueNamespace('console-config');
    audit.length = 0;
    const { url, app } = await start(namespace);
    const put = await session(url);
    const zk = await startRegistry({ namespace });
    try {
      const before = (await zk.getData('/report/config'))!.data.toString('utf8');
      const response = await put(
        'jobs/report/config',
        { cron: '0 30 4 * * ?', shardingTotalCount: 6, jobParameter: 'full', failover: true, description: 'nightly' },
        'alice',
      );
      expect(response.status).toBe(200);
      const body = (await response.json()) as {
        done: string;
        configuration: { cron: string; shardingTotalCount: number };
        changed: Record<string, { before: unknown; after: unknown }>;
      };
      // Answered in this library's dialect; stored in Quartz's (below), as Java instances read it.
      expect(body.configuration).toMatchObject({ cron: '0 30 4 * * *', shardingTotalCount: 6 });
      expect(body.changed.shardingTotalCount).toEqual({ before: 4, after: 6 });
      // The node: Quartz's cron, the zone, the new fields; the keys the writer did not touch kept.
      const after = (await zk.getData('/report/config'))!.data.toString('utf8');
      // (Strings quoted as the library's writer quotes them, which SnakeYAML reads.)
      for (const line of [
        'cron: 0 30 4 * * ?',
        'shardingTotalCount: 6',
        "jobParameter: 'full'",
        'failover: true',
        "description: 'nightly'",
        'timeZone: GMT+08:00',
      ])
        expect(after.split('\n')).toContain(line);
      expect(before).not.toEqual(after);
      // What a Java ElasticJob instance reads from the node (SnakeYAML into its POJO, Quartz's cron, its checks).
      expect((await javaReads([after]))[0]).toMatchObject({
        fields: { cron: '0 30 4 * * ?', shardingTotalCount: 6, jobParameter: 'full', failover: true },
      });
      // The running instance follows: it rescheduled to 04:30 in its zone (UTC+8).
      const berlinTime = (time: Date | undefined) =>
        time?.toLocaleTimeString('en-GB', { timeZone: 'Etc/GMT-8', hour12: false });
      await eventually(
        () => berlinTime(app.get(ElasticJobRegistry).getJobStatus('report').nextFireTime),
        (time) => time === '04:30:00',
        10_000,
        'the instance to reschedule',
      );
      // Who changed what, as an event.
      await eventually(
        () => audit.length,
        (n) => n === 1,
        5_000,
        'the audit event',
      );
      expect(audit[0]).toMatchObject({
        type: 'config.changed',
        jobName: 'report',
        by: 'alice',
        via: 'console',
        changes: {
          cron: { before: '0 0 3 * * *', after: '0 30 4 * * *' },
          shardingTotalCount: { before: 4, after: 6 },
          failover: { before: false, after: true },
        },
      });
      // An empty zone in the editor is sent as null: the zone is removed (the instances' own).
      expect((await put('jobs/report/config', { timeZone: null })).status).toBe(200);
      expect((await zk.getData('/report/config'))!.data.toString('utf8')).not.toContain('timeZone');
      await put('jobs/report/config', { timeZone: 'Etc/GMT-8' });
    } finally {
      await zk.close();
    }
  });

  it('refuses what @ShardedJob() refuses, naming the field, with nothing written', async () => {
    const namespace = uniqueNamespace('console-config-bad');
    audit.length = 0;
    const { url } = await start(namespace);
    const put = await session(url);
    const zk = await startRegistry({ namespace });
    try {
      const stored = await zk.getData('/report/config');
      const refusals: Array<[unknown, number, RegExp]> = [
        [{ cron: 'every day' }, 400, /cron/],
        [{ shardingTotalCount: 0 }, 400, /shardingTotalCount/],
        [{ shardingTotalCount: 'six' }, 400, /shardingTotalCount/],
        [{ shardingItemParameters: '0=a,9=z' }, 400, /shardingItemParameters/],
        [{ timeZone: 'Mars/Olympus' }, 400, /timeZone/],
        [{ jobShardingStrategyType: 'ROUND_ROBIN' }, 400, /jobShardingStrategyType/], // not the console's to edit
        [{ jobName: 'other' }, 400, /jobName/],
        [[1, 2], 400, /body/],
      ];
      for (const [body, status, message] of refusals) {
        const response = await put('jobs/report/config', body);
        expect(response.status, JSON.stringify(body)).toBe(status);
        expect(((await response.json()) as { message: string }).message, JSON.stringify(body)).toMatch(message);
      }
      expect((await put('jobs/no-such-job/config', { jobParameter: 'x' })).status).toBe(404);
      // Nothing written: the node's version is the one read before.
      expect((await zk.getData('/report/config'))!.stat.version).toBe(stored!.stat.version);
      expect(audit).toEqual([]);
      // Without the page's token: refused by the action guard.
      const forged = await fetch(`${url}/api/jobs/report/config`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jobParameter: 'x' }),
      });
      expect(forged.status).toBe(403);
    } finally {
      await zk.close();
    }
  });

  it('previews a cron: its next fire times in the zone, or the refusal a job would get', async () => {
    const { url } = await start(uniqueNamespace('console-cron'));
    const ok = await fetch(`${url}/api/cron?expression=${encodeURIComponent('0 0 12 ? * MON')}&timeZone=Asia/Tokyo`);
    expect(ok.status).toBe(200);
    const preview = (await ok.json()) as { nextFireTimes: string[]; shown: string; quartz: string };
    expect(preview.nextFireTimes).toHaveLength(5);
    // Noon in Tokyo is 03:00 UTC, on Mondays.
    for (const time of preview.nextFireTimes) {
      expect(new Date(time).getUTCHours()).toBe(3);
      expect(new Date(time).getUTCDay()).toBe(1);
    }
    expect(preview.shown).toMatch(/^Mon \d{4}-\d\d-\d\d 12:00:00, .*\(Asia\/Tokyo\)$/);
    const bad = await fetch(`${url}/api/cron?expression=${encodeURIComponent('61 * * * * *')}`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toMatch(/61 \* \* \* \* \*/);
  });
});
