import { CronExpressionParser } from 'cron-parser';
import { describe, expect, it } from 'vitest';
import { resolveJobConfiguration } from '../../lib/job/config/job-configuration.validator.js';
import { CronDialectError, fromQuartzCron, toQuartzCron } from '../../lib/schedule/quartz-cron.js';

const base = { jobName: 'orders', shardingTotalCount: 1 };

/** The next `count` instants after 2026-01-01T00:00:00Z (a Thursday), in UTC, of a cron in this library's dialect. */
function nextInstants(cron: string, count: number): string[] {
  const expression = CronExpressionParser.parse(cron, { currentDate: new Date('2026-01-01T00:00:00Z'), tz: 'UTC' });
  return Array.from({ length: count }, () => expression.next().toISOString()!);
}

// Quartz crons from Quartz's CronTrigger tutorial and CronExpression javadoc (plus numbered days), with the instants
// they mean there, worked out by hand from 2026-01-01 (a Thursday) on.
const quartzTable: Array<[string, string, string[]]> = [
  ['0 0 12 * * ?', 'noon every day', ['2026-01-01T12:00:00.000Z', '2026-01-02T12:00:00.000Z']],
  ['0 0/5 14 * * ?', 'every 5 minutes from 14:00', ['2026-01-01T14:00:00.000Z', '2026-01-01T14:05:00.000Z']],
  [
    '0 15 10 ? * MON-FRI',
    '10:15 on weekdays',
    ['2026-01-01T10:15:00.000Z', '2026-01-02T10:15:00.000Z', '2026-01-05T10:15:00.000Z'],
  ],
  ['0 15 10 15 * ?', '10:15 on the 15th', ['2026-01-15T10:15:00.000Z', '2026-02-15T10:15:00.000Z']],
  ['0 15 10 L * ?', '10:15 on the last day of the month', ['2026-01-31T10:15:00.000Z', '2026-02-28T10:15:00.000Z']],
  [
    '0 15 10 ? * 6L',
    '10:15 on the last Friday (Quartz 6 = Friday)',
    ['2026-01-30T10:15:00.000Z', '2026-02-27T10:15:00.000Z'],
  ],
  ['0 15 10 ? * 6#3', '10:15 on the third Friday', ['2026-01-16T10:15:00.000Z', '2026-02-20T10:15:00.000Z']],
  [
    '0 0 12 1/5 * ?',
    'noon every 5 days from the 1st',
    ['2026-01-01T12:00:00.000Z', '2026-01-06T12:00:00.000Z', '2026-01-11T12:00:00.000Z'],
  ],
  ['0 11 11 11 11 ?', '11:11 on November 11th', ['2026-11-11T11:11:00.000Z']],
  [
    '0 0 12 ? * 2,4,6',
    'noon on Quartz 2, 4, 6: Monday, Wednesday, Friday',
    ['2026-01-02T12:00:00.000Z', '2026-01-05T12:00:00.000Z', '2026-01-07T12:00:00.000Z'],
  ],
  ['0 0 12 ? * 1', 'noon on Quartz 1: Sunday', ['2026-01-04T12:00:00.000Z', '2026-01-11T12:00:00.000Z']],
  ['0 0 12 ? * 7', 'noon on Quartz 7: Saturday', ['2026-01-03T12:00:00.000Z', '2026-01-10T12:00:00.000Z']],
  [
    '0 0 12 ? * 2-6/2',
    'noon on Quartz 2-6/2: Monday, Wednesday, Friday',
    ['2026-01-02T12:00:00.000Z', '2026-01-05T12:00:00.000Z', '2026-01-07T12:00:00.000Z'],
  ],
  ['0 0 12 ? * * *', 'a year field of *', ['2026-01-01T12:00:00.000Z']],
];

describe('a stored Quartz cron read with Quartz meaning', () => {
  it.each(quartzTable)('%s (%s) fires on the instants Quartz documents', (quartz, _, instants) => {
    const ours = fromQuartzCron(quartz);
    expect(nextInstants(ours, instants.length)).toEqual(instants);
    // Written back, it reads the same again: what a Java instance and ours store round-trips.
    expect(fromQuartzCron(toQuartzCron(ours))).toBe(ours);
    expect(nextInstants(fromQuartzCron(toQuartzCron(ours)), instants.length)).toEqual(instants);
  });

  it('refuses a year other than *', () => {
    expect(() => fromQuartzCron('0 0 12 ? * * 2027')).toThrow(CronDialectError);
  });

  it('takes a stored cron without ? as this library wrote it before (Quartz would refuse it)', () => {
    expect(fromQuartzCron('*/5 * * * * 1-5')).toBe('*/5 * * * * 1-5');
  });
});

// This library's dialect (cron-parser: 0 or 7 = Sunday), what it is stored as, and the instants both mean.
const codeTable: Array<[string, string, string[]]> = [
  ['*/5 * * * * *', '*/5 * * * * ?', ['2026-01-01T00:00:05.000Z', '2026-01-01T00:00:10.000Z']],
  ['0 */10 * * *', '0 0 */10 * * ?', ['2026-01-01T10:00:00.000Z', '2026-01-01T20:00:00.000Z']],
  [
    '0 0 12 * * 1-5',
    '0 0 12 ? * MON,TUE,WED,THU,FRI',
    ['2026-01-01T12:00:00.000Z', '2026-01-02T12:00:00.000Z', '2026-01-05T12:00:00.000Z'],
  ],
  ['0 0 12 * * 0', '0 0 12 ? * SUN', ['2026-01-04T12:00:00.000Z']],
  ['0 0 12 * * 7', '0 0 12 ? * SUN', ['2026-01-04T12:00:00.000Z']],
  [
    '0 0 12 * * */2',
    '0 0 12 ? * SUN,TUE,THU,SAT',
    ['2026-01-01T12:00:00.000Z', '2026-01-03T12:00:00.000Z', '2026-01-04T12:00:00.000Z'],
  ],
  ['0 15 10 * * 5L', '0 15 10 ? * 6L', ['2026-01-30T10:15:00.000Z']],
  ['0 15 10 * * 5#3', '0 15 10 ? * 6#3', ['2026-01-16T10:15:00.000Z']],
  ['0 0 12 15 * *', '0 0 12 15 * ?', ['2026-01-15T12:00:00.000Z']],
  ['0 0 12 * jan,jul *', '0 0 12 * 1,7 ?', ['2026-01-01T12:00:00.000Z', '2026-01-02T12:00:00.000Z']],
];

describe('a cron of the code written in Quartz dialect', () => {
  it.each(codeTable)('%s is stored as %s, same instants', (code, quartz, instants) => {
    expect(toQuartzCron(code)).toBe(quartz);
    expect(nextInstants(code, instants.length)).toEqual(instants);
    expect(nextInstants(fromQuartzCron(quartz), instants.length)).toEqual(instants);
  });

  it('refuses a cron restricting both day-of-month and day-of-week, saying why and what to write', () => {
    expect(() => toQuartzCron('0 0 12 15 * 1')).toThrow(/both day-of-month and day-of-week.*leave the other '\*'/);
  });
});

describe('edge cases both sides must read alike (review of the translation)', () => {
  it('accepts crons naming Wednesday through the whole validation, both ways (WED is not Quartz W)', () => {
    expect(resolveJobConfiguration({ ...base, cron: '0 0 12 * * 1-5' }).cron).toBe('0 0 12 * * MON,TUE,WED,THU,FRI');
    const stored = fromQuartzCron('0 15 10 ? * MON-FRI');
    expect(resolveJobConfiguration({ ...base, cron: stored }).cron).toBe('0 15 10 * * MON,TUE,WED,THU,FRI');
    expect(() => resolveJobConfiguration({ ...base, cron: '0 0 12 15W * *' })).toThrow(/'W' \(nearest weekday\)/);
  });

  it('writes month names as numbers; reads a step after a name as Quartz does (ignored)', () => {
    expect(toQuartzCron('0 0 12 1 jan/3 *')).toBe('0 0 12 1 1/3 ?');
    expect(toQuartzCron('0 0 12 1 1-mar *')).toBe('0 0 12 1 1-3 ?');
    expect(fromQuartzCron('0 0 12 1 JAN/3 ?')).toBe('0 0 12 1 1 *');
    expect(fromQuartzCron('0 0 12 ? * MON-FRI/2')).toBe('0 0 12 * * MON,TUE,WED,THU,FRI');
  });

  it('keeps Sunday in an open day-of-week step, as cron-parser runs it to 7', () => {
    expect(toQuartzCron('0 0 12 * * 1/2')).toBe('0 0 12 ? * SUN,MON,WED,FRI');
    expect(nextInstants('0 0 12 * * 1/2', 4)).toEqual(nextInstants(fromQuartzCron(toQuartzCron('0 0 12 * * 1/2')), 4));
  });

  it('never sees a preset: the validator writes it out first (Quartz has none), so none is stored', () => {
    const config = resolveJobConfiguration({ ...base, cron: '@daily' });
    expect(config.cron).toBe('0 0 0 * * *');
    expect(toQuartzCron(config.cron)).toBe('0 0 0 * * ?');
  });

  it.each([
    ['H 0 * * * *', /'H'/],
    ['0 0 12 * * 1,5L', /mixes a last or nth weekday/],
    ['0 0 12 * * 1L,5L', /mixes a last or nth weekday/],
    ['0 0 12 1,L * *', /'L' only alone/],
    ['*/60 * * * * *', /step of 60 in seconds/],
    ['0 0 */24 * * *', /step of 24 in hours/],
  ])('refuses %s, which Quartz cannot read', (cron, message) => {
    expect(() => toQuartzCron(cron)).toThrow(message);
  });
});
