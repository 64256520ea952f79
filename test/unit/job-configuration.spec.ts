import { describe, expect, it } from 'vitest';
import { JobConfigurationError } from '../../lib/errors/elastic-job.errors.js';
import { resolveJobClass, resolveJobConfiguration } from '../../lib/job/config/job-configuration.validator.js';
import { fromConfigYaml, StoredConfigProblem, toConfigYaml } from '../../lib/job/config/job-configuration.yaml.js';
import { parseShardingItemParameters } from '../../lib/job/config/sharding-item-parameters.js';
import { JobNodePath, serverIpOfInstance } from '../../lib/job/paths.js';
import type { ShardedJobOptions } from '../../lib/interfaces/sharded-job-options.interface.js';

const base: ShardedJobOptions = { jobName: 'orders', cron: '*/5 * * * * *', shardingTotalCount: 3 };

function errorOf(options: Partial<ShardedJobOptions> | Record<string, unknown>): JobConfigurationError {
  try {
    resolveJobConfiguration({ ...base, ...options } as ShardedJobOptions);
  } catch (error) {
    if (error instanceof JobConfigurationError) return error;
    throw error;
  }
  throw new Error('expected a JobConfigurationError');
}

const EMAIL_PROPS: Record<string, string> = {
  'email.host': 'smtp.example.com',
  'email.port': '465',
  'email.username': 'u',
  'email.password': 'p',
  'email.from': 'jobs@example.com',
  'email.to': 'ops@example.com',
};
const withoutProp = (props: Record<string, string>, name: string): Record<string, string> =>
  Object.fromEntries(Object.entries(props).filter(([key]) => key !== name));

describe('resolveJobConfiguration', () => {
  it("applies ElasticJob's builder defaults", () => {
    const config = resolveJobConfiguration(base);
    expect(config).toMatchObject({
      monitorExecution: true,
      failover: false,
      misfire: true,
      maxTimeDiffSeconds: -1,
      reconcileIntervalMinutes: 10,
      jobShardingStrategyType: 'AVG_ALLOCATION',
      jobErrorHandlerType: 'LOG',
      jobParameter: '',
      description: '',
      disabled: false,
      overwrite: false,
      staticSharding: false,
      shardingItemParameters: '',
    });
  });

  it("reads Quartz's ? as *", () => {
    expect(resolveJobConfiguration({ ...base, cron: '0/1 * * * * ?' }).cron).toBe('0/1 * * * * *');
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['jobName', { jobName: '' }, /required/],
    ['jobName', { jobName: 'a/b' }, /node name/],
    ['jobName', { jobName: '..' }, /relative path segment/],
    ['jobName', { jobName: 'a\ufff0b' }, /ZooKeeper refuses/],
    ['jobName', { jobName: 'j'.repeat(1025) }, /is 1025 characters long; at most 1024 \(the operator's tools/],
    ['cron', { cron: undefined }, /required/],
    ['cron', { cron: 'every minute' }, /cron/],
    ['cron', { cron: '0 0 12 * * ? 2030' }, /year/],
    ['cron', { cron: '0 0 12 15W * ?' }, /W/],
    ['timeZone', { timeZone: 'Mars/Olympus' }, /IANA/],
    ['shardingTotalCount', { shardingTotalCount: 0 }, /> 0/],
    ['shardingTotalCount', { shardingTotalCount: 1.5 }, /> 0/],
    ['shardingTotalCount', { shardingTotalCount: undefined }, /required/],
    ['shardingItemParameters', { shardingItemParameters: '0=a,1' }, /format error/],
    ['shardingItemParameters', { shardingItemParameters: '0=' }, /format error/],
    ['shardingItemParameters', { shardingItemParameters: 'x=a' }, /not a non-negative integer/],
    ['shardingItemParameters', { shardingItemParameters: '0=a,7=b' }, /outside 0..2/],
    ['shardingItemParameters', { shardingItemParameters: { 5: 'e' } }, /outside/],
    ['shardingItemParameters', { shardingItemParameters: '0=a,1=b,0=c' }, /item 0 is given twice \('0=a' and '0=c'\)/],
    ['shardingItemParameters', { shardingItemParameters: { 0: 'a', '00': 'b' } }, /item 0 is given twice/],
    ['jobShardingStrategyType', { jobShardingStrategyType: 'RANDOM' }, /unknown strategy 'RANDOM'/],
    ['jobShardingStrategyType', { jobShardingStrategyType: { type: 'X' } }, /sharding/],
    ['jobErrorHandlerType', { jobErrorHandlerType: 'PAGER' }, /unknown error handler 'PAGER'/],
    // The alert handlers' props, as ElasticJob's *JobErrorHandlerPropertiesValidator checks them, and more.
    [
      'props.email.host',
      { jobErrorHandlerType: 'EMAIL' },
      /'props.email.host': is required by the EMAIL error handler/,
    ],
    ['props.email.to', { jobErrorHandlerType: 'EMAIL', props: withoutProp(EMAIL_PROPS, 'email.to') }, /required/],
    ['props.email.port', { jobErrorHandlerType: 'EMAIL', props: { ...EMAIL_PROPS, 'email.port': '0' } }, /positive/],
    ['props.email.port', { jobErrorHandlerType: 'EMAIL', props: { ...EMAIL_PROPS, 'email.port': 'smtp' } }, /integer/],
    ['props.email.port', { jobErrorHandlerType: 'EMAIL', props: { ...EMAIL_PROPS, 'email.port': '70000' } }, /65535/],
    [
      'props.email.useSsl',
      { jobErrorHandlerType: 'EMAIL', props: { ...EMAIL_PROPS, 'email.useSsl': 'starttls' } },
      /must be true or false, got "starttls"/,
    ],
    ['props.email.to', { jobErrorHandlerType: 'EMAIL', props: { ...EMAIL_PROPS, 'email.to': 'ops' } }, /addresses/],
    ['props.wechat.webhook', { jobErrorHandlerType: 'WECHAT' }, /required by the WECHAT/],
    ['props.wechat.webhook', { jobErrorHandlerType: 'WECHAT', props: { 'wechat.webhook': 'key=abc' } }, /URL/],
    [
      'props.dingtalk.readTimeoutMilliseconds',
      {
        jobErrorHandlerType: 'DINGTALK',
        props: {
          'dingtalk.webhook': 'https://oapi.dingtalk.com/robot/send?access_token=t',
          'dingtalk.readTimeoutMilliseconds': '-1',
        },
      },
      /should be positive, got -1/,
    ],
    ['props.webhook.url', { jobErrorHandlerType: 'WEBHOOK', props: { 'webhook.url': 'ftp://x.example/hook' } }, /http/],
    [
      'props.alert.throttleSeconds',
      {
        jobErrorHandlerType: 'WEBHOOK',
        props: { 'webhook.url': 'https://x.example/h', 'alert.throttleSeconds': 'often' },
      },
      /seconds/,
    ],
    ['jobErrorHandlerType', { jobErrorHandlerType: { type: '', handleException: () => undefined } }, /non-empty/],
    ['monitorExecution', { monitorExecution: 'yes' }, /true or false/],
    ['maxTimeDiffSeconds', { maxTimeDiffSeconds: -5 }, /-1/],
    ['reconcileIntervalMinutes', { reconcileIntervalMinutes: -1 }, /integer/],
  ])('rejects a bad %s, naming the job and the field', (field, options, message) => {
    const error = errorOf(options);
    expect(error.field).toBe(field);
    expect(error.message).toMatch(message);
    // A bad jobName names the job as given; an empty one cannot name it.
    const given = (options as { jobName?: string }).jobName;
    const job = field !== 'jobName' ? 'orders' : given === '' ? undefined : given;
    expect(error.jobName).toBe(job);
    expect(error.message.startsWith(job === undefined ? 'ElasticJobModule options: ' : `Job '${job}': `)).toBe(true);
  });
});

describe('shardingItemParameters', () => {
  it('parses ElasticJob strings and objects', () => {
    expect(parseShardingItemParameters(' 0 = a , 1=b ')).toEqual(
      new Map([
        [0, 'a'],
        [1, 'b'],
      ]),
    );
    expect(parseShardingItemParameters({ 0: 'x', 2: 'z' })).toEqual(
      new Map([
        [0, 'x'],
        [2, 'z'],
      ]),
    );
    expect(parseShardingItemParameters('')).toEqual(new Map());
    expect(parseShardingItemParameters('0=a=b')).toMatch(/format error/);
  });
});

describe('config YAML', () => {
  it('writes the strategy and error handler only when they are not the defaults, as Java does', () => {
    const typed = toConfigYaml(
      resolveJobConfiguration({ ...base, jobShardingStrategyType: 'ODEVITY', jobErrorHandlerType: 'THROW' }),
    );
    expect(typed).toContain('jobShardingStrategyType: ODEVITY');
    expect(typed).toContain('jobErrorHandlerType: THROW');
    const defaults = toConfigYaml(resolveJobConfiguration(base));
    expect(defaults).not.toContain('jobShardingStrategyType');
    expect(defaults).not.toContain('jobErrorHandlerType');
    expect(fromConfigYaml(defaults)).toMatchObject({
      jobShardingStrategyType: undefined,
      jobErrorHandlerType: undefined,
    });
    expect(resolveJobConfiguration({ ...base, ...fromConfigYaml(defaults) } as never)).toMatchObject({
      jobShardingStrategyType: 'AVG_ALLOCATION',
      jobErrorHandlerType: 'LOG',
    });
  });

  it('writes keys in alphabetical order, every boolean, no nulls', () => {
    const yaml = toConfigYaml(
      resolveJobConfiguration({ ...base, shardingItemParameters: { 1: 'B', 0: 'A' }, jobParameter: 'p' }),
    );
    const keys = yaml
      .trim()
      .split('\n')
      .map((line) => line.split(':')[0]);
    expect(keys).toEqual([...keys].sort());
    expect(keys).toEqual([
      'cron',
      'description',
      'disabled',
      'failover',
      'jobName',
      'jobParameter',
      'maxTimeDiffSeconds',
      'misfire',
      'monitorExecution',
      'overwrite',
      'reconcileIntervalMinutes',
      'shardingItemParameters',
      'shardingTotalCount',
      'staticSharding',
    ]);
    expect(yaml).toContain('shardingItemParameters: 0=A,1=B');
    // The cron in Quartz's dialect, which Java ElasticJob instances read: '?' in day-of-week.
    expect(/^cron: '?(.*?)'?$/m.exec(yaml)?.[1]).toBe('*/5 * * * * ?');
    expect(yaml).toContain("description: ''");
    expect(fromConfigYaml(yaml)).toMatchObject({
      cron: '*/5 * * * * *',
      shardingTotalCount: 3,
      monitorExecution: true,
      misfire: true,
    });
  });

  it("reads Java ElasticJob's YAML (missing booleans are false, extra keys ignored)", () => {
    const javaYaml = [
      'cron: 0/1 * * * * ?',
      'description: Job description',
      'jobName: test_job',
      'jobShardingStrategyType: AVG_ALLOCATION',
      'props:',
      '  key: value',
      'shardingItemParameters: 0=A,1=B,2=C',
      'shardingTotalCount: 3',
      '',
    ].join('\n');
    expect(fromConfigYaml(javaYaml)).toMatchObject({
      cron: '0/1 * * * * *', // read with Quartz's meaning, in this library's dialect
      shardingTotalCount: 3,
      monitorExecution: false,
      misfire: false,
      reconcileIntervalMinutes: 0,
    });
  });
});

describe('paths', () => {
  it('builds the ElasticJob layout in one place', () => {
    const p = new JobNodePath('orders');
    expect(p.running(3)).toBe('/orders/sharding/3/running');
    expect(p.leaderElectionLatch).toBe('/orders/leader/election/latch');
    expect(p.shardingNecessary).toBe('/orders/leader/sharding/necessary');
    expect(p.instance('10.0.0.5@-@42')).toBe('/orders/instances/10.0.0.5@-@42');
    expect(p.instanceIdOf('/orders/instances/10.0.0.5@-@42')).toBe('10.0.0.5@-@42');
    expect(p.serverIpOf('/orders/servers/10.0.0.5')).toBe('10.0.0.5');
    expect(p.serverIpOf('/orders/servers')).toBeUndefined();
  });
  it('matches instances to servers exactly, never by prefix (EJ #2226)', () => {
    expect(serverIpOfInstance('10.0.0.12@-@7')).toBe('10.0.0.12');
    expect(serverIpOfInstance('10.0.0.12@-@7')).not.toBe('10.0.0.1');
  });
});

describe('fromConfigYaml on YAML that parses but is not data', () => {
  it.each([
    [
      'an alias to no anchor',
      'cron: *nowhere\nshardingTotalCount: 2\n',
      /^(cannot be read as YAML data|is not valid YAML)/,
    ],
    [
      'a self-referencing anchor',
      "cron: '* * * * * *'\nshardingTotalCount: &n [*n]\n",
      /^'shardingTotalCount' must be an integer/,
    ],
    [
      'an alias bomb',
      `a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c ` +
        `[*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\ncron: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n`,
      /^cannot be read as YAML data/,
    ],
  ])('%s is a StoredConfigProblem, never another error', (_, yaml, message) => {
    let thrown: unknown;
    try {
      fromConfigYaml(yaml);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(StoredConfigProblem);
    expect((thrown as Error).message).toMatch(message);
  });
});

describe('resolveJobClass (the identity in the job root node)', () => {
  it('is jobClass when given, else ClassName.methodName', () => {
    expect(resolveJobClass({ ...base, jobClass: 'com.acme.ReportJob' }, 'Jobs.run')).toBe('com.acme.ReportJob');
    expect(resolveJobClass(base, 'Jobs.run')).toBe('Jobs.run');
  });

  it.each([
    ['an empty string', '', /non-empty string/],
    ['blanks', '   ', /non-empty string/],
    ['a number', 42, /non-empty string.*got 42/],
    ['whitespace around it', ' com.acme.ReportJob', /one line/],
    ['two lines', 'com.acme.\nReportJob', /one line/],
    ['a name of 2000 characters', 'x'.repeat(2000), /2000 characters long; at most 1024/],
  ])('refuses %s, naming the job and jobClass', (_, jobClass, message) => {
    let thrown: unknown;
    try {
      resolveJobClass({ ...base, jobClass: jobClass as string }, 'Jobs.run');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(JobConfigurationError);
    expect(thrown).toMatchObject({ jobName: 'orders', field: 'jobClass' });
    expect((thrown as Error).message).toMatch(message);
  });
});

describe('the config node time zone, as Java ElasticJob reads it', () => {
  it('writes a whole-hour offset as GMT±HH:00 and reads it back as the same zone', () => {
    const yaml = toConfigYaml(resolveJobConfiguration({ ...base, timeZone: 'Etc/GMT-8' }));
    expect(yaml).toContain('timeZone: GMT+08:00');
    expect(fromConfigYaml(yaml).timeZone).toBe('Etc/GMT-8');
  });

  it('refuses a stored offset with minutes, naming timeZone', () => {
    expect(() => fromConfigYaml("cron: '* * * * * ?'\nshardingTotalCount: 1\ntimeZone: GMT+05:30\n")).toThrow(
      /^'timeZone' '?GMT\+05:30'? is a fixed offset/,
    );
  });
});
