import { describe, expect, it } from 'vitest';
import { AlertDispatcher, MAX_ALERTS_IN_FLIGHT, type AlertSend } from '../../lib/job/alerts/alert-dispatcher.js';
import { keepMaskedSecrets, maskSecretProps, maskSecretsInConfigYaml } from '../../lib/job/alerts/alert-props.js';
import { AlertThrottle, errorKind } from '../../lib/job/alerts/alert-throttle.js';
import { cutToBytes, WECOM_MAX_TEXT_BYTES } from '../../lib/job/alerts/http-alerts.js';

/** The alert handlers' pure parts: the throttle over an hour of failures, the dispatcher's rules, the masking. */

const context = { shardingItem: 0, taskId: 'job@-@0@-@READY@-@10.0.0.1@-@1' };

function recordingLogger(): { lines: string[]; logger: { log(m: string): void; warn(m: string): void } } {
  const lines: string[] = [];
  return { lines, logger: { log: (m) => lines.push(`log ${m}`), warn: (m) => lines.push(`warn ${m}`) } };
}

describe('AlertThrottle', () => {
  it('a job failing every second for an hour, window 300 s: 12 alerts, each after the first saying 299 held back', () => {
    let now = 0;
    const throttle = new AlertThrottle(
      () => 300_000,
      () => now,
    );
    const sent: number[] = [];
    for (let second = 0; second < 3600; second++) {
      now = second * 1000;
      const admitted = throttle.admit(new Error(`timeout after ${5000 + second} ms`));
      if (admitted.send) sent.push(admitted.heldBack);
    }
    expect(sent).toEqual([0, ...Array.from({ length: 11 }, () => 299)]);
  });

  it('kinds apart: another class or message is alerted on at once; window 0 sends every one', () => {
    let now = 0;
    const throttle = new AlertThrottle(
      () => 60_000,
      () => now,
    );
    expect(throttle.admit(new Error('disk full'))).toEqual({ send: true, heldBack: 0 });
    expect(throttle.admit(new TypeError('disk full'))).toEqual({ send: true, heldBack: 0 });
    expect(throttle.admit(new Error('queue full'))).toEqual({ send: true, heldBack: 0 });
    expect(throttle.admit(new Error('disk full'))).toEqual({ send: false });
    now = 60_000;
    expect(throttle.admit(new Error('disk full'))).toEqual({ send: true, heldBack: 1 });
    const always = new AlertThrottle(
      () => 0,
      () => now,
    );
    expect([1, 2, 3].map(() => always.admit(new Error('x')).send)).toEqual([true, true, true]);
    expect(errorKind(new Error('order 1234 failed at 0x1f'))).toBe(errorKind(new Error('order 98 failed at 0xff')));
  });
});

describe('AlertDispatcher', () => {
  it('returns before anything is sent; a failing channel is one line when it goes and one when it is back', async () => {
    const { lines, logger } = recordingLogger();
    let now = 0;
    let answer: () => Promise<void> = () => Promise.reject(new Error('SMTP 127.0.0.1:2525: ECONNREFUSED'));
    const sends: string[] = [];
    const send: AlertSend = (_type, message) => {
      sends.push(message.text);
      return answer();
    };
    const props = { 'alert.throttleSeconds': '0' };
    const dispatcher = new AlertDispatcher(
      'EMAIL',
      logger,
      () => props,
      send,
      () => now,
    );
    dispatcher.alert('job', new Error('boom'), context);
    expect(sends).toEqual([]); // not on the item's path: sent from the next turn of the event loop
    await dispatcher.idle();
    expect(sends).toHaveLength(1);
    for (let i = 0; i < 5; i++) {
      now += 1000;
      dispatcher.alert('job', new Error('boom'), context);
      await dispatcher.idle();
    }
    expect(lines).toEqual([
      'warn the EMAIL alert channel is unavailable: SMTP 127.0.0.1:2525: ECONNREFUSED; alerts are not sent until it ' +
        'answers (failures are counted until it answers again)',
    ]);
    answer = () => Promise.resolve();
    now += 1000;
    dispatcher.alert('job', new Error('boom'), context);
    await dispatcher.idle();
    expect(lines.slice(1)).toEqual([
      'log the EMAIL alert channel is available again after 6.0 s: 6 alert(s) failed while it was away',
      "log an alert of item 0's failure was sent by EMAIL",
    ]);
  });

  it(`at most ${MAX_ALERTS_IN_FLIGHT} deliveries under way: the others dropped and counted, not queued`, async () => {
    const { lines, logger } = recordingLogger();
    const release: Array<() => void> = [];
    const send: AlertSend = () => new Promise<void>((resolve) => release.push(resolve));
    const dispatcher = new AlertDispatcher('WEBHOOK', logger, () => ({ 'alert.throttleSeconds': '0' }), send);
    for (let i = 0; i < 20; i++) dispatcher.alert('job', new Error('boom'), context);
    await new Promise((resolve) => setImmediate(resolve));
    expect(release).toHaveLength(MAX_ALERTS_IN_FLIGHT);
    expect(lines).toEqual([expect.stringMatching(/^warn the WEBHOOK alert channel is unavailable: 8 alerts still/)]);
    for (const done of release) done();
    await dispatcher.idle();
  });
});

describe("WeCom's text", () => {
  it('is cut to 2048 bytes of UTF-8 on a character boundary; a shorter one is kept whole', () => {
    const long = `Job 'x' exception occur in job processing, caused by Error: 库存不足\n${'    at step (/app/x.js:1:1)\n'.repeat(200)}`;
    const cut = cutToBytes(long, WECOM_MAX_TEXT_BYTES);
    expect(Buffer.byteLength(cut, 'utf8')).toBeLessThanOrEqual(2048);
    expect(Buffer.byteLength(cut, 'utf8')).toBeGreaterThan(2040);
    expect(cut.endsWith('…')).toBe(true);
    expect(long.startsWith(cut.slice(0, -1))).toBe(true);
    expect(cutToBytes('库'.repeat(10), 10)).toBe('库库…'); // 3 bytes each, the ellipsis 3: 9 of 10
    expect(cutToBytes('short', 2048)).toBe('short');
  });
});

describe('secrets', () => {
  const props = {
    'dingtalk.webhook': 'https://oapi.dingtalk.com/robot/send?access_token=abc',
    'dingtalk.secret': 'SECabc',
    'dingtalk.keyword': 'jobs',
    'email.password': 'pw',
    'webhook.url': 'https://hooks.slack.com/services/T0/B0/xyz',
    'wechat.webhook': 'not a url key=k',
    'http.uri': 'http://example.com/?token=kept',
  };

  it('masked as shown: whole, or a URL down to its origin; other props as they are', () => {
    expect(maskSecretProps(props)).toEqual({
      'dingtalk.webhook': 'https://oapi.dingtalk.com/******',
      'dingtalk.secret': '******',
      'dingtalk.keyword': 'jobs',
      'email.password': '******',
      'webhook.url': 'https://hooks.slack.com/******',
      'wechat.webhook': '******',
      'http.uri': 'http://example.com/?token=kept',
    });
    const none = { 'http.uri': 'x' };
    expect(maskSecretProps(none)).toBe(none);
  });

  it('sent back masked, a secret keeps its stored value; changed, it takes the new one', () => {
    const sent = { ...maskSecretProps(props), 'email.password': 'new', 'dingtalk.keyword': 'alerts' };
    expect(keepMaskedSecrets(sent, props)).toEqual({ ...props, 'email.password': 'new', 'dingtalk.keyword': 'alerts' });
  });

  it('a config node dumped: its secret lines masked, quoted or not', () => {
    const yaml = [
      'jobName: x',
      'props:',
      "  dingtalk.secret: 'SEC''abc'",
      '  dingtalk.webhook: https://oapi.dingtalk.com/robot/send?access_token=abc',
      '  email.password: "pw"',
      '  http.uri: http://example.com/',
      '',
    ].join('\n');
    expect(maskSecretsInConfigYaml(yaml)).toBe(
      [
        'jobName: x',
        'props:',
        "  dingtalk.secret: '******'",
        "  dingtalk.webhook: 'https://oapi.dingtalk.com/******'",
        "  email.password: '******'",
        '  http.uri: http://example.com/',
        '',
      ].join('\n'),
    );
  });
});
