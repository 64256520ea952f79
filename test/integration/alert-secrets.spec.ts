import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { type INestApplication, Injectable, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type ElasticJobEvent,
  ElasticJobModule,
  ElasticJobOperator,
  ElasticJobRegistry,
  OnElasticJobEvent,
} from '../../lib/index.js';
import { runCli } from '../../lib/cli/run.js';
import { CSRF_HEADER, ElasticJobConsoleModule } from '../../lib/console/index.js';
import { appOptions } from '../support/app.js';
import { startRobot } from '../support/local-robot.js';
import { startSmtp } from '../support/local-smtp.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * The alert handlers' secrets (`email.password`, `dingtalk.secret`, the robots' and the hook's URLs with their
 * tokens) are never printed: every output an operator or a log reader sees is captured while the deliveries fail
 * (so that their failures are logged) and while operators edit the jobs on each surface, and searched for them;
 * the stored values are kept through those edits.
 */

afterEach(async () => {
  await releaseAll();
  vi.restoreAllMocks();
});

const SECRETS = [
  'pw-S3CRET-mail',
  'pw-S3CRET-new',
  'SEC-S3CRET-ding',
  'tok-S3CRET-ding',
  'key-S3CRET-wecom',
  'S3CRET-hook',
];

const audit: ElasticJobEvent[] = [];
@Injectable()
class AuditTrail {
  @OnElasticJobEvent('config.changed')
  record(event: ElasticJobEvent): void {
    audit.push(event);
  }
}

describe('alert secrets', () => {
  it('appear in no log, error, operator answer, CLI output, console answer or event, and survive edits', async () => {
    const printed: string[] = [];
    for (const level of ['log', 'error', 'warn', 'debug', 'verbose', 'fatal'] as const)
      vi.spyOn(Logger.prototype, level).mockImplementation((...args: unknown[]) => {
        printed.push(
          args.map((arg) => (arg instanceof Error ? `${arg.message}\n${arg.stack}` : String(arg))).join(' '),
        );
      });
    const smtp = await startSmtp({ secure: false, user: 'jobs', pass: 'another-password' });
    hold(() => smtp.close());
    const robot = await startRobot('the-robot-has-another-secret');
    hold(() => robot.close());
    const closed = await startRobot();
    const closedBase = closed.base;
    await closed.close(); // a port nothing listens on any more

    const namespace = uniqueNamespace('alert-secrets');
    audit.length = 0;
    @Module({
      imports: [ElasticJobModule.forRoot(appOptions(namespace)), ElasticJobConsoleModule.forRoot({ actions: true })],
      providers: [AuditTrail],
    })
    class App {}
    const app: INestApplication = await NestFactory.create(App, { logger: ['error', 'warn', 'log'] });
    hold(() => app.close());
    await app.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/elastic-job`;
    const registry = app.get(ElasticJobRegistry);
    const jobs: Record<string, { type: 'EMAIL' | 'DINGTALK' | 'WECHAT' | 'WEBHOOK'; props: Record<string, string> }> = {
      mailer: {
        type: 'EMAIL',
        props: {
          'email.host': '127.0.0.1',
          'email.port': String(smtp.port),
          'email.useSsl': 'false',
          'email.ssl.trust': '*',
          'email.username': 'jobs',
          'email.password': 'pw-S3CRET-mail',
          'email.from': 'jobs@example.com',
          'email.to': 'ops@example.com',
        },
      },
      ding: {
        type: 'DINGTALK',
        props: {
          'dingtalk.webhook': `${robot.base}/robot/send?access_token=tok-S3CRET-ding`,
          'dingtalk.secret': 'SEC-S3CRET-ding',
        },
      },
      wecom: { type: 'WECHAT', props: { 'wechat.webhook': `${robot.base}/down?key=key-S3CRET-wecom` } },
      hook: { type: 'WEBHOOK', props: { 'webhook.url': `${closedBase}/hooks/T0/B0/S3CRET-hook` } },
    };
    for (const [jobName, { type, props }] of Object.entries(jobs))
      await registry.addJob(
        { jobName, cron: '0 0 3 1 1 ?', shardingTotalCount: 1, jobErrorHandlerType: type, props },
        () => {
          throw new Error('ledger locked');
        },
      );
    // Each delivery fails (a wrong password, a wrong signature, HTTP 500, nothing listening): logged, secrets not.
    for (const jobName of Object.keys(jobs)) await registry.trigger(jobName);
    await eventually(
      () => printed.filter((line) => /alert channel is unavailable/.test(line)).length,
      (n) => n === 4,
      30_000,
      'four failed deliveries logged',
    );

    const outputs: unknown[] = [];
    // Errors: a bad value given next to a secret names the prop, not the value (nor the secret).
    const declared = await registry
      .addJob(
        {
          jobName: 'bad',
          cron: '0 0 3 1 1 ?',
          shardingTotalCount: 1,
          jobErrorHandlerType: 'DINGTALK',
          props: { 'dingtalk.webhook': 'tok-S3CRET-ding', 'dingtalk.secret': 'SEC-S3CRET-ding' },
        },
        () => undefined,
      )
      .catch((error: Error) => error);
    expect(declared).toMatchObject({ name: 'JobConfigurationError', field: 'props.dingtalk.webhook' });
    outputs.push(String(declared), (declared as Error).stack);

    // The operator API: read, edited beside the secrets (sent back masked), refused.
    const operator = await ElasticJobOperator.connect({ serverLists: zkConnect(), namespace });
    hold(() => operator.close());
    for (const jobName of Object.keys(jobs)) outputs.push(await operator.getJobConfiguration(jobName));
    const ding = (await operator.getJobConfiguration('ding'))!;
    expect(ding.props).toEqual({
      'dingtalk.secret': '******',
      'dingtalk.webhook': `${robot.base}/******`,
    });
    outputs.push(
      await operator.updateJobConfiguration('ding', {
        description: 'edited by the API',
        props: { ...ding.props, 'dingtalk.keyword': 'jobs' },
      }),
    );
    const refused = await operator
      .updateJobConfiguration('ding', { props: { ...ding.props, 'dingtalk.webhook': 'tok-S3CRET-ding' } })
      .catch((error: Error) => error);
    expect(refused).toMatchObject({ field: 'props.dingtalk.webhook' });
    outputs.push(String(refused), (refused as Error).stack);

    // The CLI: config (human and JSON), config --set, dump.
    const cli = async (...argv: string[]): Promise<string> => {
      let text = '';
      const out = new Writable({
        write(chunk: Buffer, _encoding, done) {
          text += chunk.toString('utf8');
          done();
        },
      });
      const code = await runCli(['--zk', zkConnect(), '--namespace', namespace, ...argv], {
        stdout: out,
        stderr: out,
        env: {},
      });
      return `${code} ${text}`;
    };
    for (const jobName of Object.keys(jobs))
      outputs.push(await cli('config', jobName), await cli('config', jobName, '--json'));
    const mailerProps = (await operator.getJobConfiguration('mailer'))!.props;
    outputs.push(
      await cli('config', 'mailer', '--set', `props=${JSON.stringify({ ...mailerProps, 'email.subject': 'CLI' })}`),
      await cli('config', 'wecom', '--set', 'description=edited by the CLI'),
      await cli('dump'),
    );
    expect(outputs.at(-1)).toContain('email.password: ');

    // The console: the job list, each job's detail, an edit of other fields (and the answer), the audit event.
    const page = await fetch(url);
    const token = /name="elastic-job-csrf" content="([^"]+)"/.exec(await page.text())![1]!;
    const cookie = page.headers.get('set-cookie')!.split(';')[0]!;
    outputs.push(await (await fetch(`${url}/api/jobs`)).text());
    for (const jobName of Object.keys(jobs)) outputs.push(await (await fetch(`${url}/api/jobs/${jobName}`)).text());
    const detail = JSON.parse(outputs.at(-1) as string) as { props: Record<string, string> };
    expect(detail.props['webhook.url']).toBe(`${closedBase}/******`);
    const put = await fetch(`${url}/api/jobs/hook/config`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', cookie, [CSRF_HEADER]: token },
      // As the console's editor sends it: every prop as shown, one changed beside them.
      body: JSON.stringify({ props: { ...detail.props, 'webhook.readTimeoutMilliseconds': '2000' } }),
    });
    expect(put.status).toBe(200);
    outputs.push(await put.text());
    // Refused as the other surfaces refuse it, naming the prop (nothing written: the stored URL is read below).
    const refusedPut = await fetch(`${url}/api/jobs/hook/config`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', cookie, [CSRF_HEADER]: token },
      body: JSON.stringify({ props: { ...detail.props, 'webhook.url': 'S3CRET-hook' } }),
    });
    const refusal = await refusedPut.text();
    expect({ status: refusedPut.status, body: JSON.parse(refusal) as unknown }).toMatchObject({
      status: 400,
      body: {
        name: 'JobConfigurationError',
        code: 'INVALID_CONFIGURATION',
        message: expect.stringContaining("'props.webhook.url'"),
      },
    });
    outputs.push(refusal);
    // A secret changed in the console: audited as a change of props, both sides masked.
    const mailer = JSON.parse(await (await fetch(`${url}/api/jobs/mailer`)).text()) as {
      props: Record<string, string>;
    };
    const changedSecret = await fetch(`${url}/api/jobs/mailer/config`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', cookie, [CSRF_HEADER]: token },
      body: JSON.stringify({ props: { ...mailer.props, 'email.password': 'pw-S3CRET-new' } }),
    });
    expect(changedSecret.status).toBe(200);
    outputs.push(await changedSecret.text());
    await eventually(
      () => audit.length,
      (n) => n === 2,
      10_000,
      'the audit events',
    );
    expect(audit[1]).toMatchObject({ jobName: 'mailer', changes: { props: expect.any(Object) } });
    outputs.push(JSON.stringify(audit));

    const everything = [
      ...printed,
      ...outputs.map((output) => (typeof output === 'string' ? output : JSON.stringify(output))),
    ].join('\n');
    expect(everything).toContain('******'); // the search does see the masked values
    for (const secret of SECRETS)
      expect({ secret, found: everything.includes(secret) }).toEqual({ secret, found: false });

    // Kept as stored through every edit: the API's, the CLI's, the console's.
    const zk = await observer(namespace);
    const stored = async (jobName: string): Promise<string> =>
      (await zk.getData(`/${jobName}/config`))!.data.toString('utf8');
    expect(await stored('ding')).toContain('  dingtalk.secret: SEC-S3CRET-ding\n');
    expect(await stored('ding')).toContain(`access_token=tok-S3CRET-ding`);
    expect(await stored('ding')).toContain('  dingtalk.keyword: jobs\n');
    expect(await stored('mailer')).toContain('  email.password: pw-S3CRET-new\n');
    expect(await stored('mailer')).toContain('  email.subject: CLI\n');
    expect(await stored('wecom')).toContain('key=key-S3CRET-wecom');
    expect(await stored('hook')).toContain('/hooks/T0/B0/S3CRET-hook');
    expect(await stored('hook')).toContain("webhook.readTimeoutMilliseconds: '2000'");
  });
});
