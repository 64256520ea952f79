import { describe, expect, it } from 'vitest';
import { resolveJobConfiguration } from '../../lib/job/config/job-configuration.validator.js';
import { fromConfigYaml, storedFormOf, toConfigYaml } from '../../lib/job/config/job-configuration.yaml.js';
import type { ShardedJobOptions } from '../../lib/interfaces/sharded-job-options.interface.js';

/**
 * A job that finds its own config node adopts it without parsing the YAML (config.service.ts): storedFormOf must
 * read exactly as the YAML written and parsed back does, for every kind of value.
 */
const cases: ShardedJobOptions[] = [
  { jobName: 'plain', cron: '*/5 * * * * *', shardingTotalCount: 3 },
  {
    jobName: 'everything',
    cron: '0 30 2 ? * MON-FRI',
    timeZone: 'UTC',
    shardingTotalCount: 4,
    shardingItemParameters: '0=eu,1=us,2=ap,3="quoted: yes"',
    jobParameter: '123',
    description: "it's: a 'report'\nwith lines and ünïcödé",
    failover: true,
    misfire: false,
    monitorExecution: false,
    maxTimeDiffSeconds: 30,
    reconcileIntervalMinutes: 0,
    jobShardingStrategyType: 'ROUND_ROBIN',
    jobErrorHandlerType: 'IGNORE',
    disabled: true,
    overwrite: true,
    staticSharding: true,
  },
  { jobName: 'one-off', oneOff: true, shardingTotalCount: 2, jobParameter: 'true', timeZone: 'Etc/GMT+5' },
  { jobName: 'last-friday', cron: '0 0 12 ? * 5L', timeZone: 'Europe/Berlin', shardingTotalCount: 1 },
  { jobName: 'nth', cron: '@weekly', shardingTotalCount: 1, description: 'null', jobParameter: '-1' },
];

describe('storedFormOf', () => {
  it.each(cases.map((options) => [options.jobName!, options] as const))(
    'reads %s as its YAML written and parsed back does',
    (_name, options) => {
      const config = resolveJobConfiguration(options);
      expect(storedFormOf(config)).toEqual(fromConfigYaml(toConfigYaml(config)));
    },
  );
});
