import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

/** `cron '<expression>'`: a cron checked as a job would check it, with its stored form and next fire times. */
describe('CLI: cron', () => {
  it('prints the stored Quartz form and the next fire times in the zone, with weekdays', async () => {
    const result = await runCli(['cron', '0 0 12 ? * 2', '--zone', 'UTC', '--count', '3']);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.slice(0, 3)).toEqual(['cron        0 0 12 * * TUE', 'stored as   0 0 12 ? * TUE', 'next firings']);
    expect(lines.slice(3)).toHaveLength(3);
    for (const line of lines.slice(3)) expect(line).toMatch(/^ {2}Tue \d{4}-\d\d-\d\d 12:00:00 {2}UTC$/);

    const json = await runCli(['cron', '@daily', '--zone', 'Asia/Tokyo', '--count', '2', '--json']);
    const parsed = JSON.parse(json.stdout) as { quartz: string; timeZone: string; nextFireTimes: string[] };
    expect(parsed).toMatchObject({ quartz: '0 0 0 * * ?', timeZone: 'Asia/Tokyo' });
    expect(parsed.nextFireTimes).toHaveLength(2);
    expect(new Date(parsed.nextFireTimes[0]!).toISOString()).toMatch(/T15:00:00.000Z$/); // midnight in Tokyo
  });

  it('exits 1 with the validation message for a cron a job would refuse, 2 for bad usage', async () => {
    const refused = await runCli(['cron', '0 0 12 15 * 1', '--zone', 'UTC']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^nestjs-elastic-job: Invalid cron '0 0 12 15 \* 1': .*read here it would fire at /);
    const invalid = await runCli(['cron', 'every day']);
    expect(invalid).toMatchObject({ code: 1, stdout: '' });
    const usage = await runCli(['cron', '0 * * * * *', '--count', 'many']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--count takes 1..100, got 'many'/);
    const twoArgs = await runCli(['cron', '0', '*']);
    expect(twoArgs.stderr).toMatch(/cron takes one expression, quoted \(got 2 arguments\)/);
  });
});
