import { spawnSync } from 'node:child_process';
import { CronExpressionParser } from 'cron-parser';
import { describe, expect, it } from 'vitest';
import { resolveJobConfiguration } from '../../lib/job/config/job-configuration.validator.js';
import { fromQuartzCron, toQuartzCron } from '../../lib/schedule/quartz-cron.js';
import { javaPeer } from '../support/java.js';

const START = Date.parse('2026-01-01T00:00:00Z'); // a Thursday
const COUNT = 6;

/** Real Quartz's next fire times (UTC) for each cron, or its error; one JVM for the whole table. */
function quartz(crons: readonly string[]): Array<number[] | string> {
  const run = spawnSync('java', javaPeer('QuartzCronPeer', [String(START), String(COUNT)]), {
    input: `${crons.join('\n')}\n`,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (run.status !== 0) throw new Error(`QuartzCronPeer failed: ${run.stderr}`);
  return run.stdout
    .trim()
    .split('\n')
    .map((line) => (line.startsWith('OK') ? line.split(' ').slice(1).map(Number) : line));
}

/** Ours: cron-parser's next fire times (UTC) for a cron in this library's dialect. */
function ours(cron: string): number[] {
  const expression = CronExpressionParser.parse(cron, { currentDate: new Date(START), tz: 'UTC' });
  return Array.from({ length: COUNT }, () => expression.next().getTime());
}

// Crons as users write them in @ShardedJob: stored in ZooKeeper for Java instances.
const codeCrons = [
  '*/5 * * * * *',
  '0 */10 * * *',
  '0 0 12 * * 1-5',
  '0 0 12 * * MON-FRI',
  '0 0 12 * * 0',
  '0 0 12 * * 7',
  '0 0 12 * * */2',
  '0 0 12 * * 1/2',
  '0 0 12 * * 6,0',
  '0 15 10 * * 5L',
  '0 15 10 * * 5#3',
  '0 0 12 15 * *',
  '0 0 12 L * *',
  '0 0 12 1 jan/3 *',
  '0 0 12 * jan,jul *',
  '0 30 9 1-7 * *',
];

// Crons as Java tools write them (Quartz's tutorial and javadoc, numbered days).
const quartzCrons = [
  '0 0 12 * * ?',
  '0 0/5 14 * * ?',
  '0 15 10 ? * MON-FRI',
  '0 15 10 L * ?',
  '0 15 10 ? * 6L',
  '0 15 10 ? * 6#3',
  '0 0 12 1/5 * ?',
  '0 11 11 11 11 ?',
  '0 0 12 ? * 2,4,6',
  '0 0 12 ? * 1',
  '0 0 12 ? * 2-6/2',
  '0 0 12 ? * */2',
  '0 0 12 1 JAN/3 ?',
  '0 0 12 ? * L',
  '0 0 12 ? * * *',
  '0 0 22-2 * * ?', // ranges that wrap round, which cron-parser itself refuses
  '0 0 22-2/2 * * ?',
  '0 0 12 1 NOV-FEB ?',
];

describe('the same instants as real Quartz (Debian libquartz2-java 2.3.2)', () => {
  it('a cron of the code, stored for Java instances, fires on the same instants in Quartz and here', () => {
    const kept = codeCrons.map((cron) => resolveJobConfiguration({ jobName: 'j', cron, shardingTotalCount: 1 }).cron);
    const stored = kept.map(toQuartzCron);
    const answers = quartz(stored);
    const mismatches = kept.flatMap((cron, index) => {
      const here = ours(cron);
      const there = answers[index];
      return JSON.stringify(here) === JSON.stringify(there)
        ? []
        : [{ code: codeCrons[index], stored: stored[index], here, there }];
    });
    expect(mismatches).toEqual([]);
  });

  it('a cron written by a Java tool fires here on the instants Quartz gives it', () => {
    const answers = quartz(quartzCrons);
    const mismatches = quartzCrons.flatMap((cron, index) => {
      const there = answers[index];
      const read = fromQuartzCron(cron);
      const here = ours(read);
      return JSON.stringify(here) === JSON.stringify(there) ? [] : [{ cron, read, here, there }];
    });
    expect(answers.filter((answer) => typeof answer === 'string')).toEqual([]);
    expect(mismatches).toEqual([]);
  });
});
