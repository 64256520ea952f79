import { CronExpression, CronExpressionParser } from 'cron-parser';
import { describe, expect, it, vi } from 'vitest';
import { resolveJobConfiguration } from '../../lib/job/config/job-configuration.validator.js';
import { toConfigYaml } from '../../lib/job/config/job-configuration.yaml.js';
import { CRON_PRESETS, nextFireTime, normalizeCron, validateCron } from '../../lib/schedule/cron-expression.js';

describe('cron', () => {
  it('supports seconds, 5-field crons and time zones', () => {
    const from = new Date('2026-01-01T00:00:00.000Z');
    expect(nextFireTime('*/5 * * * * *', undefined, from).toISOString()).toBe('2026-01-01T00:00:05.000Z');
    expect(nextFireTime('0 * * * *', 'UTC', from).toISOString()).toBe('2026-01-01T01:00:00.000Z');
    expect(nextFireTime('0 0 9 * * *', 'Europe/Berlin', from).toISOString()).toBe('2026-01-01T08:00:00.000Z');
  });
  it('answers from any starting point when the parsed expression is reused', () => {
    // The parsed expression is cached per cron: going back in time must not inherit the last answer.
    const late = new Date('2026-03-01T10:00:07.000Z');
    const early = new Date('2026-01-01T00:00:00.000Z');
    expect(nextFireTime('*/10 * * * * *', undefined, late).toISOString()).toBe('2026-03-01T10:00:10.000Z');
    expect(nextFireTime('*/10 * * * * *', undefined, early).toISOString()).toBe('2026-01-01T00:00:10.000Z');
    expect(nextFireTime('*/10 * * * * *', 'Asia/Tokyo', early).toISOString()).toBe('2026-01-01T00:00:10.000Z');
    expect(nextFireTime('0 0 9 * * *', 'Asia/Tokyo', early).toISOString()).toBe('2026-01-02T00:00:00.000Z');
    expect(nextFireTime('0 0 9 * * *', 'Europe/Berlin', early).toISOString()).toBe('2026-01-01T08:00:00.000Z');
  });
  it('computes a shared cron once per instant for many jobs, and never gives an answer a fresh computation would not', () => {
    const next = vi.spyOn(CronExpression.prototype, 'next');
    try {
      const base = Date.parse('2026-05-05T05:05:05.000Z');
      // A thousand jobs on one cron re-arm within the same second: one computation.
      for (let job = 0; job < 1000; job++)
        expect(nextFireTime('* * * * * ?', undefined, new Date(base + (job % 900))).getTime()).toBe(base + 1000);
      expect(next).toHaveBeenCalledTimes(1);
      // Remembered answers equal cron-parser's own: forward, on the instant, backwards, across DST changes.
      for (const [cron, zone] of [
        ['*/7 * * * * *', undefined],
        ['0 30 2 * * *', 'Europe/Berlin'],
        ['0 0 * * * *', 'America/New_York'],
      ] as const) {
        const start = Date.parse('2026-03-07T00:00:00.000Z');
        const jumps = Array.from({ length: 300 }, (_, i) => start + ((i * 7_919_993) % (3 * 86_400_000)));
        const samples = [
          ...jumps,
          ...[...jumps].sort((a, b) => a - b),
          ...jumps.map((at) => Math.floor(at / 1000) * 1000),
        ];
        for (const at of samples) {
          const reference = CronExpressionParser.parse(normalizeCron(cron), { tz: zone, currentDate: new Date(at) })
            .next()
            .getTime();
          expect(
            nextFireTime(cron, zone, new Date(at)).getTime(),
            `${cron} ${zone} after ${new Date(at).toISOString()}`,
          ).toBe(reference);
        }
      }
    } finally {
      next.mockRestore();
    }
  });
  it('accepts Quartz ? and a * year', () => {
    expect(normalizeCron('0/1 * * * * ?')).toBe('0/1 * * * * *');
    expect(normalizeCron('0 0 12 * * ? *')).toBe('0 0 12 * * *');
    expect(validateCron('0 0 12 * * ? *', undefined)).toBeUndefined();
  });
  it('explains what is wrong', () => {
    expect(validateCron('61 * * * * *', undefined)).toMatch(/not a valid cron/);
    expect(validateCron('* *', undefined)).toMatch(/5 or 6 fields/);
  });
});

describe('cron presets', () => {
  const presets = [
    '@yearly',
    '@annually',
    '@monthly',
    '@weekly',
    '@daily',
    '@hourly',
    '@minutely',
    '@secondly',
    '@weekdays',
    '@weekends',
  ];

  it.each(presets)('%s is accepted, fires as cron-parser fires it, and is stored written out for Java', (preset) => {
    const config = resolveJobConfiguration({ jobName: 'p', cron: preset, shardingTotalCount: 1 });
    expect(config.cron).not.toContain('@'); // written out (days as names when the round trip keeps them so)
    const from = new Date('2026-01-01T00:00:30Z');
    const theirs = CronExpressionParser.parse(preset, { currentDate: from, tz: 'UTC' });
    const ours = CronExpressionParser.parse(config.cron, { currentDate: from, tz: 'UTC' });
    for (let i = 0; i < 3; i++) expect(ours.next().getTime()).toBe(theirs.next().getTime());
    expect(toConfigYaml(config)).not.toContain('@');
  });

  it('@midnight too (not a cron-parser preset); an unknown one is refused', () => {
    expect(resolveJobConfiguration({ jobName: 'p', cron: '@MIDNIGHT', shardingTotalCount: 1 }).cron).toBe(
      CRON_PRESETS['@midnight'],
    );
    expect(() => resolveJobConfiguration({ jobName: 'p', cron: '@fortnightly', shardingTotalCount: 1 })).toThrow(
      /'cron'/,
    );
  });
});
