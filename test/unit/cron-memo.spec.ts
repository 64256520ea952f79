import { describe, expect, it } from 'vitest';
import { JobConfigurationError } from '../../lib/errors/elastic-job.errors.js';
import { resolveJobConfiguration } from '../../lib/job/config/job-configuration.validator.js';
import { CronDialectError, fromQuartzCron, toQuartzCron } from '../../lib/schedule/quartz-cron.js';

/**
 * The crons resolved and translated before are remembered (issue 43: 1000 jobs resolved and translated theirs 4000
 * times at start-up). What is remembered must never change an answer: a refusal stays a refusal, each job's error
 * names that job, a time zone is part of what is remembered, and the bound does not lose a translation.
 */
describe('remembered crons', () => {
  const base = { shardingTotalCount: 1 };

  it('gives every job the same kept cron, and each refusal names its own job', () => {
    const first = resolveJobConfiguration({ ...base, jobName: 'a', cron: '0 0 9 * * MON-FRI' });
    const second = resolveJobConfiguration({ ...base, jobName: 'b', cron: '0 0 9 * * MON-FRI' });
    expect(second.cron).toBe(first.cron);
    for (const jobName of ['c', 'd']) {
      const refusal = (() => {
        try {
          resolveJobConfiguration({ ...base, jobName, cron: '0 0 9 1 * MON' });
        } catch (error) {
          return error;
        }
        return undefined;
      })();
      expect(refusal).toBeInstanceOf(JobConfigurationError);
      expect((refusal as Error).message).toContain(`'${jobName}'`);
    }
  });

  it('does not skip the time zone check for a remembered cron', () => {
    expect(resolveJobConfiguration({ ...base, jobName: 'e', cron: '0 30 2 * * *', timeZone: 'UTC' }).cron).toBe(
      '0 30 2 * * *',
    );
    expect(() =>
      resolveJobConfiguration({ ...base, jobName: 'f', cron: '0 30 2 * * *', timeZone: 'Not/AZone' }),
    ).toThrow(JobConfigurationError);
  });

  it('translates the same way past its bound, and refuses every time', () => {
    const crons = Array.from({ length: 1500 }, (_, i) => `${i % 60} ${Math.floor(i / 60) % 60} 1 * * 2`);
    const once = crons.map((cron) => toQuartzCron(cron));
    expect(crons.map((cron) => toQuartzCron(cron))).toEqual(once);
    expect(once.map((quartz) => fromQuartzCron(quartz))).toEqual(crons.map((cron) => cron.replace(/2$/, 'TUE')));
    for (let i = 0; i < 2; i++) expect(() => toQuartzCron('0 0 9 1 * MON')).toThrow(CronDialectError);
  });
});
