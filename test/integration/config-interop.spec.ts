import { beforeAll, describe, expect, it } from 'vitest';
import type { ShardedJobOptions } from '../../lib/interfaces/sharded-job-options.interface.js';
import { resolveJobConfiguration } from '../../lib/job/config/job-configuration.validator.js';
import { fromConfigYaml, toConfigYaml } from '../../lib/job/config/job-configuration.yaml.js';
import { javaReads, type JavaReading } from '../support/java-config-peer.js';

const stored = (options: ShardedJobOptions): string => toConfigYaml(resolveJobConfiguration(options));

describe('the config node as Java ElasticJob reads and writes it (SnakeYAML into its POJO, Quartz, its checks)', () => {
  const minimal: ShardedJobOptions = { jobName: 'report', cron: '0 0 2 * * *', shardingTotalCount: 3 };
  const everything: ShardedJobOptions = {
    jobName: 'billing',
    cron: '0 15 10 * * MON-FRI',
    timeZone: 'Etc/GMT-8',
    shardingTotalCount: 4,
    shardingItemParameters: { 0: 'Beijing', 1: 'Shanghai', 2: 'Guangzhou', 3: 'Shenzhen' },
    jobParameter: 'batch=500',
    monitorExecution: false,
    failover: true,
    misfire: false,
    maxTimeDiffSeconds: 5,
    reconcileIntervalMinutes: 0,
    jobShardingStrategyType: 'ROUND_ROBIN',
    jobErrorHandlerType: 'IGNORE',
    description: "nightly: 'quoted', #not a comment",
    disabled: true,
    overwrite: true,
    staticSharding: true,
  };
  const utc: ShardedJobOptions = { ...minimal, jobName: 'utc', timeZone: 'UTC', cron: '0 0 12 L * *' };
  let readings: JavaReading[] = [];
  beforeAll(async () => {
    readings = await javaReads([stored(minimal), stored(everything), stored(utc)]);
  });

  it('reads the defaults we write as the JobConfiguration builder gives them, every boolean explicit', () => {
    expect(readings[0]).toEqual({
      fields: {
        jobName: 'report',
        cron: '0 0 2 * * ?',
        timeZone: null,
        shardingTotalCount: 3,
        shardingItemParameters: '',
        jobParameter: '',
        monitorExecution: true,
        failover: false,
        misfire: true,
        maxTimeDiffSeconds: -1,
        reconcileIntervalMinutes: 10,
        jobShardingStrategyType: null, // the default, as Java writes it: absent
        jobErrorHandlerType: null,
        description: '',
        disabled: false,
        overwrite: false,
        staticSharding: false,
      },
      writtenBack: expect.any(String),
    });
  });

  it('reads every field we can set with its Java type, the cron in Quartz and the zone as a GMT offset', () => {
    expect(readings[1]).toEqual({
      fields: {
        jobName: 'billing',
        cron: '0 15 10 ? * MON,TUE,WED,THU,FRI',
        timeZone: 'GMT+08:00',
        shardingTotalCount: 4,
        shardingItemParameters: '0=Beijing,1=Shanghai,2=Guangzhou,3=Shenzhen',
        jobParameter: 'batch=500',
        monitorExecution: false,
        failover: true,
        misfire: false,
        maxTimeDiffSeconds: 5,
        reconcileIntervalMinutes: 0,
        jobShardingStrategyType: 'ROUND_ROBIN',
        jobErrorHandlerType: 'IGNORE',
        description: "nightly: 'quoted', #not a comment",
        disabled: true,
        overwrite: true,
        staticSharding: true,
      },
      writtenBack: expect.any(String),
    });
    expect(readings[2]).toMatchObject({ fields: { cron: '0 0 12 L * ?', timeZone: 'GMT' } });
  });

  it('what Java writes back (SnakeYAML, nulls dropped) is adopted here as the same configuration', () => {
    const options = [minimal, everything, utc];
    readings.forEach((reading, i) => {
      if (!('writtenBack' in reading)) throw new Error(`Java refused case ${i}: ${reading.error}`);
      const ours = fromConfigYaml(stored(options[i]!));
      expect(fromConfigYaml(reading.writtenBack)).toEqual(ours);
      expect(ours.shardingTotalCount).toBe(options[i]!.shardingTotalCount);
    });
  });

  it('reads an alert handler and its props as ElasticJob keeps them (docs/guide/alerts.md)', async () => {
    const alerting: ShardedJobOptions = {
      ...minimal,
      jobName: 'alerting',
      jobErrorHandlerType: 'WECHAT',
      props: {
        'wechat.webhook': 'https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k',
        'alert.throttleSeconds': '60',
      },
    };
    const [reading] = await javaReads([stored(alerting)]);
    expect(reading).toMatchObject({ fields: { jobName: 'alerting', jobErrorHandlerType: 'WECHAT' } });
    if (!reading || !('writtenBack' in reading)) throw new Error('Java refused it');
    expect(fromConfigYaml(reading.writtenBack)).toEqual(fromConfigYaml(stored(alerting)));
    expect(fromConfigYaml(reading.writtenBack).props).toEqual(alerting.props);
  });

  it('loads a job with item policies (kept in props, docs/guide/item-policies.md) and writes them back unchanged', async () => {
    const withPolicies: ShardedJobOptions = {
      ...minimal,
      jobName: 'policies',
      itemTimeoutMilliseconds: 30_000,
      retry: { attempts: 3, backoff: 'exponential', delayMilliseconds: 1000, maxDelayMilliseconds: 8000, jitter: 0.2 },
      overlap: 'cover-early',
    };
    const ours = stored(withPolicies);
    expect(ours).toContain('  item.timeout.milliseconds:');
    const [reading] = await javaReads([ours]);
    if (!reading || !('writtenBack' in reading)) throw new Error(`Java refused the job: ${JSON.stringify(reading)}`);
    expect(reading.fields).toMatchObject({ jobName: 'policies', shardingTotalCount: 3 });
    expect(fromConfigYaml(reading.writtenBack)).toEqual(fromConfigYaml(ours));
    expect(fromConfigYaml(reading.writtenBack).props).toMatchObject({
      'item.overlap': 'cover-early',
      'item.retry.attempts': '3',
      'item.timeout.milliseconds': '30000',
    });
  });

  it('the peer is as strict as Java: an unknown key, a bad cron, a zone Java cannot read are refused', async () => {
    const refused = await javaReads([
      `${stored(minimal)}jobClass: com.acme.ReportJob\n`, // identity lives in the job root node, never here
      stored(minimal).replace('cron: 0 0 2 * * ?', 'cron: 0 0 2 * * *'), // cron-parser's dialect, not Quartz's
      stored({ ...minimal, timeZone: 'Europe/Berlin' }), // the documented difference (docs/interop-java.md)
    ]);
    expect(refused).toEqual([
      { error: expect.stringContaining("Unable to find property 'jobClass'") },
      { error: expect.stringContaining('Support for specifying both a day-of-week AND a day-of-month') },
      { error: expect.stringContaining("Invalid time zone specification 'Europe/Berlin'") },
    ]);
  });
});
