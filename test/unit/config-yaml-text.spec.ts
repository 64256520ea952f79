import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { ShardedJobOptions } from '../../lib/interfaces/sharded-job-options.interface.js';
import { resolveJobConfiguration } from '../../lib/job/config/job-configuration.validator.js';
import { toConfigYaml } from '../../lib/job/config/job-configuration.yaml.js';

/** The config node as one stringify() of the whole sorted map wrote it before it was written line by line. */
function wholeDocument(text: string): string {
  return stringify(parse(text), { sortMapEntries: true, singleQuote: true, lineWidth: 0 });
}

const cases: Array<[string, ShardedJobOptions]> = [
  ['the smallest job', { jobName: 'plain', shardingTotalCount: 1, cron: '*/5 * * * * *' }],
  [
    'every field set',
    {
      jobName: 'every-field',
      cron: '0 0/5 * * * *',
      timeZone: 'Europe/Berlin',
      shardingTotalCount: 12,
      shardingItemParameters: '0=Beijing,1=Shanghai,2=Guangzhou',
      jobParameter: 'a: b, "c" \'d\' #e',
      description: 'two\nlines, and a trailing one\n',
      monitorExecution: false,
      failover: true,
      misfire: false,
      maxTimeDiffSeconds: 30,
      reconcileIntervalMinutes: 10,
      jobShardingStrategyType: 'ROUND_ROBIN',
      jobErrorHandlerType: 'THROW',
      disabled: true,
      overwrite: true,
      staticSharding: true,
    },
  ],
  [
    'texts YAML would read as other types',
    { jobName: 'typed', shardingTotalCount: 1, cron: '0 0 12 * * *', jobParameter: 'true', description: '012' },
  ],
  [
    'texts with indicators',
    {
      jobName: 'indicators',
      shardingTotalCount: 1,
      cron: '0 0 12 * * *',
      jobParameter: '- [x] & *y ! |',
      description: ': ?',
    },
  ],
  [
    'non-ASCII and empty texts',
    {
      jobName: 'unicode',
      shardingTotalCount: 1,
      cron: '0 0 12 * * *',
      jobParameter: '',
      description: 'zürich – 東京 🚀',
    },
  ],
  ['a one-off job', { jobName: 'one-off', shardingTotalCount: 2, oneOff: true }],
];

describe('the config node written line by line', () => {
  it.each(cases)('is the whole document stringify() writes: %s', (_, options) => {
    const text = toConfigYaml(resolveJobConfiguration(options));
    expect(text).toBe(wholeDocument(text));
    // And it reads back as the texts given (a text written plain that YAML reads as another type would not).
    const { jobName, jobParameter, description } = options;
    expect(parse(text)).toMatchObject({
      jobName,
      ...(jobParameter === undefined ? {} : { jobParameter }),
      ...(description === undefined ? {} : { description }),
    });
  });

  it.each([
    'billing',
    'billing-report.v2',
    '_private',
    'Report_2024',
    'e1',
    'a.',
    'Yes',
    'no',
    'NULL',
    'True',
    'n',
    'x-',
    'inf',
  ])('writes the job name %s as the whole document does', (jobName) => {
    const text = toConfigYaml(resolveJobConfiguration({ jobName, shardingTotalCount: 1, cron: '0 0 12 * * *' }));
    expect(text).toBe(wholeDocument(text));
    expect(parse(text)).toMatchObject({ jobName });
  });

  it('gives every job its own lines (no line of another job with the same values but another name)', () => {
    const a = toConfigYaml(resolveJobConfiguration({ jobName: 'first', shardingTotalCount: 1, cron: '0 0 12 * * *' }));
    const b = toConfigYaml(resolveJobConfiguration({ jobName: 'second', shardingTotalCount: 1, cron: '0 0 12 * * *' }));
    expect(a).toContain('jobName: first\n');
    expect(b).toContain('jobName: second\n');
    expect(a.replace('first', 'second')).toBe(b);
  });
});
