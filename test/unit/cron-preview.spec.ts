import { describe, expect, it } from 'vitest';
import { CronExpressionError, JobConfigurationError } from '../../lib/errors/elastic-job.errors.js';
import { resolveJobConfiguration } from '../../lib/job/config/job-configuration.validator.js';
import {
  dayOfWeekNumberWarning,
  describeCron,
  formatFireTimes,
  upcomingFireTimes,
} from '../../lib/schedule/cron-preview.js';

/** Messages that show a cron's next fire times (docs/guide/jobs-and-sharding.md, "Cron dialect"), with fixed clocks. */

const from = new Date('2026-11-23T10:00:00Z'); // a Monday

describe('describeCron', () => {
  it('gives the stored Quartz form and the next fire times on the zone wall clock', () => {
    const description = describeCron('0 0 12 * * 1-5', { timeZone: 'Europe/Berlin', count: 3, from });
    expect(description.quartz).toBe('0 0 12 ? * MON,TUE,WED,THU,FRI');
    expect(formatFireTimes(description.nextFireTimes, description.timeZone)).toBe(
      'Mon 2026-11-23 12:00:00, Tue 2026-11-24 12:00:00, Wed 2026-11-25 12:00:00 (Europe/Berlin)',
    );
  });

  it('shows a daily time inside the skipped DST hour firing an hour later on the clock', () => {
    const { nextFireTimes } = describeCron('0 30 2 * * *', {
      timeZone: 'Europe/Berlin',
      count: 2,
      from: new Date('2026-03-28T12:00:00Z'),
    });
    expect(formatFireTimes(nextFireTimes, 'Europe/Berlin')).toBe(
      'Sun 2026-03-29 03:30:00, Mon 2026-03-30 02:30:00 (Europe/Berlin)',
    );
  });

  it('refuses what a job would refuse, with a typed error', () => {
    expect(() => describeCron('every day')).toThrow(CronExpressionError);
    expect(() => describeCron('0 0 0 30 2 *')).toThrow(/Invalid cron '0 0 0 30 2 \*': .*not a valid cron/);
    expect(() => describeCron('0 * * * * *', { timeZone: 'Mars/Olympus' })).toThrow(/timeZone 'Mars\/Olympus'/);
    expect(() => describeCron('0 * * * * *', { count: 0 })).toThrow(/count must be an integer 1..100/);
  });
});

describe('validation messages with fire times', () => {
  it('a cron Quartz cannot store is refused with the instants it would fire at here', () => {
    const refuse = (): unknown =>
      resolveJobConfiguration({ jobName: 'report', cron: '0 0 12 15 * 1', shardingTotalCount: 1, timeZone: 'UTC' });
    expect(refuse).toThrow(JobConfigurationError);
    // The 15th or Mondays: both kinds of day show up among the next three.
    expect(refuse).toThrow(
      /invalid 'cron': .*read here it would fire at (Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{4}-\d\d-\d\d 12:00:00, .* \(UTC\)/,
    );
  });

  it('a Quartz-style cron with a numbered weekday is warned about with the days it fires on', () => {
    const warning = dayOfWeekNumberWarning('0 0 12 ? * 2', 'UTC');
    expect(warning).toMatch(
      /numbers day-of-week as cron-parser does .*: next firings Tue \d{4}-\d\d-\d\d 12:00:00, Tue /,
    );
    expect(warning).toMatch(/Write the days as names \(MON-FRI\)/);
    // Names mean the same day in both dialects; no `?`, no Quartz habit; `L` and `#` are translated.
    expect(dayOfWeekNumberWarning('0 0 12 ? * TUE', 'UTC')).toBeUndefined();
    expect(dayOfWeekNumberWarning('0 0 12 * * 2', 'UTC')).toBeUndefined();
    expect(dayOfWeekNumberWarning('0 0 12 ? * 5L', 'UTC')).toBeUndefined();
    expect(dayOfWeekNumberWarning('0 0 12 ? * *', 'UTC')).toBeUndefined();
  });

  it('upcomingFireTimes gives the instants strictly after the given time, in order', () => {
    expect(upcomingFireTimes('0 0 0 1 1 * ', 'UTC', 3, from).map((time) => time.toISOString())).toEqual([
      '2027-01-01T00:00:00.000Z',
      '2028-01-01T00:00:00.000Z',
      '2029-01-01T00:00:00.000Z',
    ]);
  });
});
