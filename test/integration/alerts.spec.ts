import { Injectable, Logger } from '@nestjs/common';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type ElasticJobEvent,
  type ElasticJobModuleOptions,
  ElasticJobOperator,
  ElasticJobRegistry,
  OnElasticJobEvent,
  type ShardedJobOptions,
} from '../../lib/index.js';
import { appOptions, bootApp } from '../support/app.js';
import { javaReads } from '../support/java-config-peer.js';
import { startRobot } from '../support/local-robot.js';
import { startSmtp } from '../support/local-smtp.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * The alert handlers against real receivers: a real SMTP server (smtp-server, SMTPS and STARTTLS, AUTH) and a local
 * HTTP server answering as DingTalk's and WeCom's robots and a Slack hook (test/support/local-robot.ts), with a real
 * ZooKeeper: the fields ElasticJob's handlers send, a job Java configured with DINGTALK, the throttle over a job
 * failing every second, and deliveries that fail leaving every item as it would have been.
 */

afterEach(async () => {
  await releaseAll();
  vi.restoreAllMocks();
});

const events: ElasticJobEvent[] = [];
@Injectable()
class Recorder {
  @OnElasticJobEvent('item.started')
  started(event: ElasticJobEvent): void {
    events.push(event);
  }
  @OnElasticJobEvent('item.completed')
  completed(event: ElasticJobEvent): void {
    events.push(event);
  }
  @OnElasticJobEvent('firing.skipped')
  skipped(event: ElasticJobEvent): void {
    events.push(event);
  }
}

type Completed = Extract<ElasticJobEvent, { type: 'item.completed' }>;
type Started = Extract<ElasticJobEvent, { type: 'item.started' }>;
const completions = (jobName: string): Completed[] =>
  events.filter((event): event is Completed => event.type === 'item.completed' && event.jobName === jobName);

async function boot(extra: Partial<ElasticJobModuleOptions> = {}, namespace = uniqueNamespace('alerts')) {
  events.length = 0;
  const app = await bootApp({ ...appOptions(namespace), ...extra } as ElasticJobModuleOptions, [Recorder]);
  hold(() => app.close());
  return { registry: app.get(ElasticJobRegistry), namespace, app };
}

const YEARLY = '0 0 3 1 1 ?';
const failing = (message: string) => () => {
  throw new Error(message);
};

describe('EMAIL', () => {
  it('sends the mail ElasticJob sends, over SMTPS (useSsl true) and over STARTTLS (useSsl false)', async () => {
    vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const smtps = await startSmtp({ secure: true, user: 'jobs', pass: 'mail-pass' });
    hold(() => smtps.close());
    const starttls = await startSmtp({ secure: false, user: 'jobs', pass: 'mail-pass' });
    hold(() => starttls.close());
    const mail = (port: number, extra: Record<string, string>): Record<string, string> => ({
      'email.host': '127.0.0.1',
      'email.port': String(port),
      'email.username': 'jobs',
      'email.password': 'mail-pass',
      'email.from': 'jobs@example.com',
      'email.to': 'ops@example.com, oncall@example.com',
      'email.cc': 'lead@example.com',
      'email.bcc': 'audit@example.com',
      ...extra,
    });
    const { registry } = await boot();
    await registry.addJob(
      {
        jobName: 'ledger',
        cron: YEARLY,
        shardingTotalCount: 1,
        jobErrorHandlerType: 'EMAIL',
        // smtp-server's certificate is self-signed: trusted by name, as JavaMail's mail.smtp.ssl.trust does.
        props: mail(smtps.port, { 'email.ssl.trust': '*' }),
      },
      failing('ledger locked'),
    );
    await registry.addJob(
      {
        jobName: 'payroll',
        cron: YEARLY,
        shardingTotalCount: 1,
        jobErrorHandlerType: 'EMAIL',
        props: mail(starttls.port, {
          'email.useSsl': 'false',
          'email.ssl.trust': '127.0.0.1',
          'email.subject': 'Payroll failed',
        }),
      },
      failing('payroll stuck'),
    );
    await registry.trigger('ledger');
    await registry.trigger('payroll');
    await eventually(
      () => smtps.mails.length + starttls.mails.length,
      (n) => n === 2,
      20_000,
      'two mails',
    );
    const instanceId = registry.getJobStatus('ledger').instanceId;
    for (const [received, jobName, subject, cause] of [
      [smtps.mails[0]!, 'ledger', 'ElasticJob error message', 'ledger locked'],
      [starttls.mails[0]!, 'payroll', 'Payroll failed', 'payroll stuck'],
    ] as const) {
      expect(received).toMatchObject({
        // TLS either way: from the first byte, or upgraded by STARTTLS; signed in with the username and password.
        secure: true,
        user: 'jobs',
        subject,
        from: 'jobs@example.com',
        to: ['ops@example.com', 'oncall@example.com'],
        cc: ['lead@example.com'],
        bcc: [], // not in the headers...
        envelope: {
          from: 'jobs@example.com',
          // ...but in the envelope
          to: ['ops@example.com', 'oncall@example.com', 'lead@example.com', 'audit@example.com'],
        },
      });
      // ElasticJob's text, the stack with it, then the item and the task (which names the instance).
      expect(received.text).toMatch(
        new RegExp(`^Job '${jobName}' exception occur in job processing, caused by Error: ${cause}\\n\\s+at `),
      );
      expect(received.text).toContain(`sharding item: 0, task: ${jobName}@-@0@-@READY@-@${instanceId}`);
      expect(received.html).toContain(`<pre>Job &#39;${jobName}&#39; exception occur in job processing`);
    }
  });
});

describe('DINGTALK, WECHAT and WEBHOOK', () => {
  it('alerts on a job a Java team configured with DINGTALK: keyword, signed URL, the message', async () => {
    const robot = await startRobot('SECdingtalk-secret');
    hold(() => robot.close());
    const namespace = uniqueNamespace('alerts-java');
    const zk = await observer(namespace);
    // The job as Java ElasticJob stores it: an HTTP job (type in the root node) whose config node names DINGTALK,
    // its settings in props; read and written back by SnakeYAML into ElasticJob's POJO, as Java writes it.
    const [java] = await javaReads([
      [
        `cron: '${YEARLY}'`,
        'jobErrorHandlerType: DINGTALK',
        'jobName: stock-sync',
        'props:',
        `  dingtalk.webhook: ${robot.base}/robot/send?access_token=dingtalk-token`,
        `  dingtalk.keyword: '[jobs] '`,
        '  dingtalk.secret: SECdingtalk-secret',
        '  http.method: GET',
        `  http.uri: ${robot.base}/broken`,
        'shardingTotalCount: 1',
      ].join('\n'),
    ]);
    if (!java || !('writtenBack' in java)) throw new Error(`Java refused the node: ${JSON.stringify(java)}`);
    expect(java.fields.jobErrorHandlerType).toBe('DINGTALK');
    await zk.create('/stock-sync', Buffer.from('HTTP'));
    await zk.create('/stock-sync/config', Buffer.from(java.writtenBack));
    vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const warnings = vi.spyOn(Logger.prototype, 'warn');
    const { registry } = await boot({ jobs: [{ jobName: 'stock-sync', type: 'HTTP' }] }, namespace);
    await registry.trigger('stock-sync');
    await eventually(
      () => robot.requests.length,
      (n) => n === 1,
      20_000,
      'the DingTalk message',
    );
    const [request] = robot.requests;
    expect(request).toMatchObject({
      path: '/robot/send',
      query: { access_token: 'dingtalk-token', timestamp: expect.stringMatching(/^\d{13}$/) },
      contentType: 'application/json; charset=utf-8',
      signed: true,
      body: { msgtype: 'text', text: { content: expect.any(String) } },
    });
    const content = (request!.body as { text: { content: string } }).text.content;
    // The keyword first (DingTalk drops a message without it), then ElasticJob's text.
    expect(content).toMatch(
      /^\[jobs\] Job 'stock-sync' exception occur in job processing, caused by Error: HTTP job: /,
    );
    expect(content).toContain('503');
    // Joined, not refused: nothing said of an unknown handler, and nothing of ours written over Java's node.
    expect(warnings.mock.calls.flat().join('\n')).not.toMatch(/unknown error handler/);
    expect((await zk.getData('/stock-sync/config'))!.data.toString('utf8')).toBe(java.writtenBack);
  });

  it("WECHAT posts WeCom's text message; WEBHOOK a JSON body with Slack's text", async () => {
    vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const robot = await startRobot();
    hold(() => robot.close());
    const { registry } = await boot();
    await registry.addJob(
      {
        jobName: 'wecom-job',
        cron: YEARLY,
        shardingTotalCount: 1,
        jobErrorHandlerType: 'WECHAT',
        props: { 'wechat.webhook': `${robot.base}/cgi-bin/webhook/send?key=wecom-key` },
      },
      failing('queue full'),
    );
    await registry.addJob(
      {
        jobName: 'slack-job',
        cron: YEARLY,
        shardingTotalCount: 2,
        shardingItemParameters: '0=a,1=b',
        jobErrorHandlerType: 'WEBHOOK',
        props: { 'webhook.url': `${robot.base}/hooks/T000/B000/slack-token` },
      },
      (context) => {
        if (context.shardingItem === 1) throw new Error('disk full');
      },
    );
    await registry.trigger('wecom-job');
    await registry.trigger('slack-job');
    await eventually(
      () => robot.requests.length,
      (n) => n === 2,
      20_000,
      'two messages',
    );
    const wecom = robot.requests.find((request) => request.path === '/cgi-bin/webhook/send')!;
    expect(wecom).toMatchObject({ query: { key: 'wecom-key' }, contentType: 'application/json; charset=utf-8' });
    expect(wecom.body).toEqual({ msgtype: 'text', text: { content: expect.any(String) } });
    expect((wecom.body as { text: { content: string } }).text.content).toMatch(
      /^Job 'wecom-job' exception occur in job processing, caused by Error: queue full\n\s+at /,
    );
    const slack = robot.requests.find((request) => request.path === '/hooks/T000/B000/slack-token')!;
    const instanceId = registry.getJobStatus('slack-job').instanceId;
    expect(slack.body).toEqual({
      text: expect.stringMatching(/^Job 'slack-job' exception occur in job processing, caused by Error: disk full\n/),
      jobName: 'slack-job',
      shardingItem: 1,
      taskId: `slack-job@-@0,1@-@READY@-@${instanceId}`,
    });
  });
});

describe('throttling', () => {
  it('a job failing every second: one alert a window, the next saying how many were held back', async () => {
    vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const robot = await startRobot();
    hold(() => robot.close());
    const { registry, namespace } = await boot();
    let attempt = 0;
    await registry.addJob(
      {
        jobName: 'every-second',
        cron: '* * * * * *',
        shardingTotalCount: 1,
        jobErrorHandlerType: 'WEBHOOK',
        props: { 'webhook.url': `${robot.base}/hooks/every-second`, 'alert.throttleSeconds': '3600' },
      },
      () => {
        // One kind of error (the digits do not count), each failure's number in its text.
        throw new Error(`attempt ${++attempt} failed: ledger locked`);
      },
    );
    await eventually(
      () => completions('every-second').length,
      (n) => n >= 6,
      30_000,
      'six failures',
    );
    const texts = (): string[] => robot.requests.map((request) => (request.body as { text: string }).text);
    await eventually(
      () => texts().length,
      (n) => n >= 1,
      10_000,
      'the first alert',
    );
    // Six failures or more in the window, one alert: the first.
    expect(texts()).toHaveLength(1);
    expect(texts()[0]).toMatch(/caused by Error: attempt 1 failed: ledger locked/);
    expect(texts()[0]).not.toMatch(/held back/);
    // The window made 0 by an operator (the webhook URL sent back masked keeps its value): the next failure is
    // alerted on, saying how many were held back since the first.
    const operator = await ElasticJobOperator.connect({ serverLists: zkConnect(), namespace });
    hold(() => operator.close());
    const { props } = (await operator.getJobConfiguration('every-second'))!;
    expect(props['webhook.url']).toBe(`${robot.base}/******`);
    await operator.updateJobConfiguration('every-second', { props: { ...props, 'alert.throttleSeconds': '0' } });
    await eventually(
      () => texts().length,
      (n) => n >= 3,
      20_000,
      'the alerts after the window',
    );
    const second = /attempt (\d+) failed/.exec(texts()[1]!)!;
    const k = Number(second[1]);
    expect(k).toBeGreaterThanOrEqual(7);
    expect(texts()[1]).toContain(`\n${k - 2} more alerts of this kind were held back since the last one`);
    expect(texts()[2]).toMatch(new RegExp(`attempt ${k + 1} failed`));
    expect(texts()[2]).not.toMatch(/held back/);
    // Every failure went through its item as before: a failed item each, and the alerts to the stored URL.
    expect(completions('every-second').every((event) => !event.success)).toBe(true);
    expect(robot.requests.every((request) => request.path === '/hooks/every-second')).toBe(true);
  });
});

describe('a job that stops', () => {
  it('gives its alerts under way a moment, then gives them up: a hanging receiver holds neither the stop nor the process', async () => {
    vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const warnings = vi.spyOn(Logger.prototype, 'warn');
    const robot = await startRobot();
    hold(() => robot.close());
    const { registry } = await boot();
    await registry.addJob(
      {
        jobName: 'stops-alerting',
        cron: YEARLY,
        shardingTotalCount: 1,
        jobErrorHandlerType: 'WEBHOOK',
        props: { 'webhook.url': `${robot.base}/hang`, 'webhook.readTimeoutMilliseconds': '600000' },
      },
      failing('ledger locked'),
    );
    await registry.trigger('stops-alerting');
    await eventually(
      () => robot.hanging,
      (n) => n === 1,
      20_000,
      'the alert being delivered',
    );
    await registry.removeJob('stops-alerting');
    // The job's stop closed the delivery's connection (its own timeout was ten minutes away).
    await eventually(
      () => robot.hanging,
      (n) => n === 0,
      20_000,
      'the delivery given up',
    );
    const said = warnings.mock.calls.map((call) => String(call[0]));
    expect(said).toContain("1 alert(s) by WEBHOOK not delivered within 5000 ms of the job's stop: given up");
    expect(said.filter((line) => line.startsWith('the WEBHOOK alert channel is unavailable'))).toEqual([]);
  });
});

describe('never worse than no alert', () => {
  it('a refusing SMTP server, a hanging and a timing-out webhook: items and firings as with LOG; a line per outage', async () => {
    vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const warnings = vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const logs = vi.spyOn(Logger.prototype, 'log');
    const smtp = await startSmtp({ secure: false, user: 'jobs', pass: 'mail-pass', refuse: true });
    hold(() => smtp.close());
    const robot = await startRobot();
    hold(() => robot.close());
    const { registry } = await boot();
    const every: Omit<ShardedJobOptions, 'jobName'> = { cron: '* * * * * *', shardingTotalCount: 2 };
    const unthrottled = { 'alert.throttleSeconds': '0' };
    await registry.addJob({ ...every, jobName: 'baseline' }, failing('ledger locked'));
    await registry.addJob(
      {
        ...every,
        jobName: 'mail-down',
        jobErrorHandlerType: 'EMAIL',
        props: {
          ...unthrottled,
          'email.host': '127.0.0.1',
          'email.port': String(smtp.port),
          'email.useSsl': 'false',
          'email.ssl.trust': '*',
          'email.username': 'jobs',
          'email.password': 'mail-pass',
          'email.from': 'jobs@example.com',
          'email.to': 'ops@example.com',
        },
      },
      failing('ledger locked'),
    );
    await registry.addJob(
      {
        ...every,
        jobName: 'hook-hangs',
        jobErrorHandlerType: 'WEBHOOK',
        props: { ...unthrottled, 'webhook.url': `${robot.base}/hang`, 'webhook.readTimeoutMilliseconds': '600000' },
      },
      failing('ledger locked'),
    );
    // Another hook that hangs, but whose timeouts (200 + 300 ms) end each delivery.
    const slow = await startRobot();
    hold(() => slow.close());
    await registry.addJob(
      {
        ...every,
        jobName: 'hook-times-out',
        jobErrorHandlerType: 'WEBHOOK',
        props: {
          ...unthrottled,
          'webhook.url': `${slow.base}/hang`,
          'webhook.connectTimeoutMilliseconds': '200',
          'webhook.readTimeoutMilliseconds': '300',
        },
      },
      failing('ledger locked'),
    );
    const jobs = ['baseline', 'mail-down', 'hook-hangs', 'hook-times-out'];
    // Beyond the 8 deliveries one job may have under way (each hangs for 10 minutes here).
    await eventually(
      () => Math.min(...jobs.map((job) => completions(job).length)),
      (n) => n >= 24,
      60_000,
      'twelve firings of each job',
    );
    // Eight held by the hook, and no more ever sent to it while they hang.
    await eventually(
      () => robot.hanging,
      (n) => n === 8,
      10_000,
      'eight deliveries hanging',
    );
    expect(robot.requests).toHaveLength(8);
    expect(smtp.connections).toBeGreaterThanOrEqual(2);
    // The cron instants each job's items started on, within the span all three were running: the same.
    // Firings at a cron instant only: a misfire's catch-up (a loaded machine's) has no instant of its own.
    const instants = (job: string): number[] =>
      events
        .filter((event): event is Started => event.type === 'item.started' && event.jobName === job)
        .flatMap((event) => (event.scheduledTime ? [event.scheduledTime.getTime()] : []));
    const from = Math.max(...jobs.map((job) => Math.min(...instants(job))));
    const to = Math.min(...jobs.map((job) => Math.max(...instants(job))));
    // Strictly inside: the firings at the edges may have been seen in part.
    const within = (job: string): number[] => instants(job).filter((at) => at > from && at < to);
    expect(within('baseline').length).toBeGreaterThanOrEqual(10);
    expect(within('mail-down')).toEqual(within('baseline'));
    expect(within('hook-hangs')).toEqual(within('baseline'));
    expect(within('hook-times-out')).toEqual(within('baseline'));
    expect(slow.requests.length).toBeGreaterThanOrEqual(10); // each failure tried, each timed out
    // Every item failed once, as the baseline's did, with its own cause.
    for (const job of jobs.slice(1))
      expect(completions(job).map((event) => [event.success, event.failureCause?.split('\n')[0]])).toEqual(
        completions(job).map(() => [false, 'Error: ledger locked']),
      );
    // One line when each channel went away, none per failure.
    const said = (): string[] => warnings.mock.calls.map((call) => String(call[0]));
    expect(said().filter((line) => line.startsWith('the EMAIL alert channel is unavailable'))).toHaveLength(1);
    const webhookLines = said().filter((line) => line.startsWith('the WEBHOOK alert channel is unavailable'));
    expect(webhookLines).toHaveLength(2); // one for each job's channel
    expect(webhookLines).toEqual(
      expect.arrayContaining([
        expect.stringContaining('8 alerts still being delivered'),
        expect.stringMatching(/: POST to http:\/\/127\.0\.0\.1:\d+ timed out after 500 ms;/),
      ]),
    );
    expect(said().join('\n')).toMatch(/the EMAIL alert channel is unavailable: SMTP 127\.0\.0\.1:\d+: .*421/);
    // The mail server back: one line saying so, with the count of what failed meanwhile; the mail delivered.
    smtp.refusing = false;
    await eventually(
      () => smtp.mails.length,
      (n) => n >= 1,
      20_000,
      'a mail once the server is back',
    );
    await eventually(
      () =>
        logs.mock.calls
          .map((call) => String(call[0]))
          .filter((line) => /EMAIL alert channel is available again/.test(line)),
      (lines) => lines.length === 1,
      10_000,
      'the line saying it is back',
    );
  });
});
