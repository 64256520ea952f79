import 'reflect-metadata';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_FAILED, EXIT_NOT_FOUND, EXIT_USAGE } from '../../lib/cli/commands/cli-errors.js';
import { runCli } from '../../lib/cli/run.js';
import { CSRF_HEADER, ElasticJobConsoleModule } from '../../lib/console/index.js';
import { findFreePort } from '../../lib/devtools/local-zookeeper.js';
import {
  ELASTIC_JOB_ERROR_CODES,
  ElasticJobModule,
  ElasticJobOperator,
  ElasticJobRegistry,
  errorPayload,
  JobNotFoundError,
  ShardedJob,
  type ElasticJobErrorPayload,
} from '../../lib/index.js';
import { createWhileJobExists } from '../../lib/job/storage/create-while-job-exists.js';
import { JobNodePath } from '../../lib/job/paths.js';
import { ITEM_POLICY_PROPS } from '../../lib/job/policies/item-policies.js';
import { elasticJobMessagesController } from '../../lib/microservices/index.js';
import { appOptions } from '../support/app.js';
import { LocalNats } from '../support/local-nats.js';
import { TreeSnapshots } from '../support/tree-snapshot.js';
import { eventually, startRegistry, uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * Every operator surface under hostile input (issue 27): the operator API, each message pattern over TCP and over
 * NATS, each CLI command and each console route, against one app on the real ZooKeeper and NATS. Each input of
 * each table gets its exact error, and the namespace's tree is compared, node for node with its versions and
 * zxids, with the snapshot taken before: nothing written, not even the same bytes again.
 */

const NAMESPACE = uniqueNamespace('bad-input');
const IP = '10.0.9.1';
const MB = 1024 * 1024;
const HUGE = 'x'.repeat(MB);
/** How every message quotes HUGE: cut to 64 characters, its length said. */
const HUGE_QUOTED = `'${'x'.repeat(63)}…' (${MB} characters)`;
const REFUSED_CHARS = 'contains whitespace, a control character or a character ZooKeeper refuses';

@Injectable()
class ReportJob {
  // Fires only when triggered this year: the tree stays still between the snapshots.
  @ShardedJob({ jobName: 'report', cron: '0 0 0 1 1 *', shardingTotalCount: 3 })
  run(): void {}
}

// ------------------------------------------------------------------ the expected errors

type Expected = Pick<ElasticJobErrorPayload, 'name' | 'code' | 'message'>;

function invalid(operation: string, field: string, detail: string): Expected {
  return {
    name: 'InvalidOperationError',
    code: 'INVALID_ARGUMENT',
    message: `${operation}: invalid '${field}': ${detail}`,
  };
}

/** A configuration the job would refuse, as `@ShardedJob()` refuses it (JobConfigurationError, INVALID_CONFIGURATION). */
function badConfig(field: string, detail: string): Expected {
  return {
    name: 'JobConfigurationError',
    code: 'INVALID_CONFIGURATION',
    message: `Job 'report': invalid '${field}': ${detail}`,
  };
}

/** Alert handlers' props the operator's surfaces refuse, naming the prop (docs/guide/alerts.md). */
const MAIL_WITHOUT_TO = {
  'email.host': 'smtp.example.com',
  'email.port': '465',
  'email.username': 'jobs',
  'email.password': 'secret',
  'email.from': 'jobs@example.com',
};
const ALERT_CHANGES: ReadonlyArray<readonly [Record<string, unknown>, Expected]> = [
  [
    { jobErrorHandlerType: 'EMAIL', props: MAIL_WITHOUT_TO },
    badConfig('props.email.to', 'is required by the EMAIL error handler'),
  ],
  [
    { jobErrorHandlerType: 'EMAIL', props: { ...MAIL_WITHOUT_TO, 'email.to': 'ops@example.com', 'email.port': '0' } },
    badConfig('props.email.port', 'should be positive and at most 65535, got 0'),
  ],
  [
    {
      jobErrorHandlerType: 'EMAIL',
      props: { ...MAIL_WITHOUT_TO, 'email.to': 'ops@example.com', 'email.useSsl': 'tls' },
    },
    badConfig('props.email.useSsl', 'must be true or false, got "tls"'),
  ],
  [
    { jobErrorHandlerType: 'DINGTALK', props: { 'dingtalk.webhook': 'oapi.dingtalk.com/robot/send?access_token=t' } },
    badConfig('props.dingtalk.webhook', 'must be an http: or https: URL (the robot or hook to POST the alert to)'),
  ],
];

function noJob(quoted: string): Expected {
  return {
    name: 'JobNotFoundError',
    code: 'JOB_NOT_FOUND',
    message:
      `No job named ${quoted} in this namespace (it has no config node): check the name and the namespace; the ` +
      'jobs query lists the jobs there',
  };
}

function noServer(operation: string, quotedIp: string, jobName: string | undefined): Expected {
  return {
    name: 'ServerNotFoundError',
    code: 'SERVER_NOT_FOUND',
    message:
      `${operation}: no server ${quotedIp} in ${jobName === undefined ? 'any job of this namespace' : `job '${jobName}'`} ` +
      '(it has no servers/{ip} node there): check the IP; a server that has not registered cannot be operated on ' +
      'ahead, as its instance rewrites the node when it starts (the servers query lists the servers there)',
  };
}

// ------------------------------------------------------------------ the hostile inputs

/** Names that are no job's name: [what, value, what the error says after "must be a job's name, "]. */
const BAD_NAMES: ReadonlyArray<readonly [string, unknown, string]> = [
  ['a number', 42, 'got 42: it is not a string'],
  ['null', null, 'got null: it is not a string'],
  ['a boolean', true, 'got true: it is not a string'],
  ['an object', { jobName: 'report' }, 'got an object: it is not a string'],
  ['an array', ['report'], 'got an array of 1: it is not a string'],
  ['empty', '', "got '': it is empty"],
  ['1 MB', HUGE, `got ${HUGE_QUOTED}: it is longer than 1024 characters`],
  ['a path', 'report/sharding', "got 'report/sharding': it contains '/'"],
  ['..', '..', "got '..': it is a relative path segment ('.' or '..')"],
  ['a climb out', '../report', "got '../report': it contains '/'"],
  ['a NUL', 'rep\u0000ort', `got 'rep\\u0000ort': it ${REFUSED_CHARS}`],
  ['a line break', 'report\n', `got 'report\\n': it ${REFUSED_CHARS}`],
  ['a space', 'the report', `got 'the report': it ${REFUSED_CHARS}`],
  ['an emoji', 'report📈', `got 'report📈': it ${REFUSED_CHARS}`],
  ['a lone surrogate', 'report\ud800', `got 'report\\ud800': it ${REFUSED_CHARS}`],
];
/** Well-formed names of no job: [value, as quoted]. */
const UNKNOWN_NAMES: ReadonlyArray<readonly [string, string]> = [
  ['nope', "'nope'"],
  ['Report', "'Report'"],
  ['отчёт', "'отчёт'"],
  ['zookeeper', "'zookeeper'"],
];
/** IPs that are no server's: [what, value, how the error quotes it]. */
const BAD_IPS: ReadonlyArray<readonly [string, unknown, string]> = [
  ['a number', 42, '42'],
  ['null', null, 'null'],
  ['an array', [IP], 'an array of 1'],
  ['empty', '', "''"],
  ['not an IP', '10.9.9', "'10.9.9'"],
  ['a host name', 'localhost', "'localhost'"],
  ['1 MB', HUGE, HUGE_QUOTED],
  ['a path', `${IP}/x`, `'${IP}/x'`],
  ['a climb out', `../${IP}`, `'../${IP}'`],
  ['a line break', `${IP}\n`, `'${IP}\\n'`],
  ['other digits', '١٠.٠.٩.١', "'١٠.٠.٩.١'"],
];
/** The item policies' property names, as their error lists them. */
const ITEM_POLICY_NAMES = Object.values(ITEM_POLICY_PROPS).join(', ');

/** The fields a configuration update may change, as its error lists them. */
const CHANGEABLE =
  'cron, timeZone, shardingTotalCount, shardingItemParameters, jobParameter, monitorExecution, failover, misfire, ' +
  'maxTimeDiffSeconds, reconcileIntervalMinutes, jobShardingStrategyType, jobErrorHandlerType, description, ' +
  'disabled, overwrite, staticSharding, props';
const ipDetail = (quoted: string): string => `must be a server's IP address (IPv4 or IPv6), got ${quoted}`;
/** Well-formed IPs of no server here. */
const UNKNOWN_IPS = ['10.9.9.9', '::1', '10.0.9.10'];
/** Items that are none of the job's (shardingTotalCount 3): [what, value, what the error says]. */
const BAD_ITEMS: ReadonlyArray<readonly [string, unknown, string]> = [
  ['negative', -1, 'must be an integer >= 0, got -1'],
  ['fractional', 1.5, 'must be an integer >= 0, got 1.5'],
  ['a string', '1', "must be an integer >= 0, got '1'"],
  ['null', null, 'must be an integer >= 0, got null'],
  ['an object', { item: 1 }, 'must be an integer >= 0, got an object'],
  ['beyond safe integers', 2 ** 53, 'must be an integer >= 0, got 9007199254740992'],
  ['1e21', 1e21, 'must be an integer >= 0, got 1e+21'],
  ['out of range', 3, 'must be an item of the job, 0..2 (shardingTotalCount 3), got 3'],
  ['far out of range', 1_000_000, 'must be an item of the job, 0..2 (shardingTotalCount 3), got 1000000'],
];
/** Job parameters a trigger refuses: [what, value, what the error says]. */
const BAD_PARAMETERS: ReadonlyArray<readonly [string, unknown, string]> = [
  ['a number', 42, 'must be a string, got 42'],
  ['an object', { a: 1 }, 'must be a string, got an object'],
  ['1 MB', HUGE, `is ${MB} bytes long; at most 65536 (it is written once for each instance online)`],
];

// ------------------------------------------------------------------ the app, and the tree before

let app: INestApplication;
let consoleUrl: string;
let consolePort: number;
let clients: Record<'TCP' | 'NATS', ClientProxy>;
let nats: LocalNats;
let operator: ElasticJobOperator;
let snapshots: TreeSnapshots;
let before: string[];
let csrf: Record<string, string>;

beforeAll(async () => {
  nats = await LocalNats.create({ maxPayloadBytes: 8 * MB });
  const tcpPort = await findFreePort();
  @Module({
    imports: [
      ElasticJobModule.forRoot(appOptions(NAMESPACE, { instance: { ip: IP } })),
      ElasticJobConsoleModule.forRoot({ actions: true }),
    ],
    controllers: [elasticJobMessagesController()],
    providers: [ReportJob],
  })
  class BadInputApp {}
  app = await NestFactory.create(BadInputApp, { logger: ['error'] });
  app.connectMicroservice({ transport: Transport.TCP, options: { host: '127.0.0.1', port: tcpPort } });
  app.connectMicroservice({ transport: Transport.NATS, options: { servers: [nats.url] } });
  await app.startAllMicroservices();
  await app.listen(0, '127.0.0.1');
  consolePort = (app.getHttpServer().address() as AddressInfo).port;
  consoleUrl = `http://127.0.0.1:${consolePort}/elastic-job`;

  // One firing first, so that the tree has what a working job has (sharding, owners), then stillness.
  const registry = app.get(ElasticJobRegistry);
  await eventually(
    () => registry.getJobStatus('report').registered,
    (registered) => registered,
    20_000,
    'the job registered',
  );
  await registry.trigger('report');
  await eventually(
    () => registry.getJobStatus('report'),
    (status) => status.lastFireTime !== undefined && !status.firing && status.shardingItems.length === 3,
    20_000,
    'the triggered firing done',
  );

  clients = {
    TCP: ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port: tcpPort } }),
    NATS: ClientProxyFactory.create({ transport: Transport.NATS, options: { servers: [nats.url] } }),
  };
  await Promise.all(Object.values(clients).map((client) => client.connect()));
  operator = await ElasticJobOperator.connect({ serverLists: zkConnect(), namespace: NAMESPACE });
  const page = await fetch(consoleUrl);
  const token = /<meta name="elastic-job-csrf" content="([^"]+)">/.exec(await page.text())![1]!;
  csrf = { cookie: page.headers.get('set-cookie')!.split(';')[0]!, [CSRF_HEADER]: token };

  snapshots = await TreeSnapshots.open(NAMESPACE);
  before = await snapshots.take();
  if (!before.some((line) => line.startsWith(`/${NAMESPACE}/report/sharding/2/instance `)))
    throw new Error(`the job was not sharded before the snapshot:\n${before.join('\n')}`);
}, 60_000);

afterAll(async () => {
  snapshots?.close();
  await operator?.close();
  await Promise.all(Object.values(clients ?? {}).map((client) => client.close()));
  await app?.close();
  await nats?.stop();
});

/** Nothing written since the snapshot: every node, its data, versions and zxids as they were. */
async function expectTreeUnchanged(label: string): Promise<void> {
  expect({ label, tree: await snapshots.take() }).toEqual({ label, tree: before });
}

/** The error a call rejects with, as a caller on any surface receives it. */
async function failure(call: () => Promise<unknown>): Promise<Expected | { resolved: unknown }> {
  try {
    return { resolved: await call() };
  } catch (error) {
    const { name, code, message } = errorPayload(error);
    return { name, code, message };
  }
}

// ------------------------------------------------------------------ the operator API

describe('the operator API refuses bad input before reading or writing anything', () => {
  /** A call of one job: [verb, call with that name, what an unknown job gives]. */
  const byName: ReadonlyArray<readonly [string, (name: unknown) => Promise<unknown>, 'error' | 'undefined']> = [
    ['getJobBriefInfo', (name) => operator.getJobBriefInfo(name as string), 'undefined'],
    ['getJobServersInfo', (name) => operator.getJobServersInfo(name as string), 'undefined'],
    ['getJobConfiguration', (name) => operator.getJobConfiguration(name as string), 'undefined'],
    ['getShardingInfo', (name) => operator.getShardingInfo(name as string), 'error'],
    ['trigger', (name) => operator.trigger(name as string), 'error'],
    ['disable', (name) => operator.disable({ jobName: name as string }), 'error'],
    ['enable', (name) => operator.enable({ jobName: name as string }), 'error'],
    ['shutdown', (name) => operator.shutdown({ jobName: name as string }), 'error'],
    ['remove', (name) => operator.remove({ jobName: name as string }), 'error'],
    ['disableItem', (name) => operator.disableItem(name as string, 0), 'error'],
    ['enableItem', (name) => operator.enableItem(name as string, 0), 'error'],
    ['rerunItem', (name) => operator.rerunItem(name as string, 0), 'error'],
    [
      'updateJobConfiguration',
      (name) => operator.updateJobConfiguration(name as string, { description: 'x' }),
      'error',
    ],
    ['removeJob', (name) => operator.removeJob(name as string), 'error'],
  ];

  it.each(byName)(
    '%s: a bad job name is an InvalidOperationError, an unknown one not found',
    async (verb, call, unknown) => {
      for (const [what, value, detail] of BAD_NAMES) {
        const got = await failure(() => call(value));
        expect({ what, got }).toEqual({ what, got: invalid(verb, 'jobName', `must be a job's name, ${detail}`) });
      }
      for (const [value, quoted] of UNKNOWN_NAMES) {
        const got = await failure(() => call(value));
        expect({ value, got }).toEqual({ value, got: unknown === 'error' ? noJob(quoted) : { resolved: undefined } });
      }
      await expectTreeUnchanged(verb);
    },
  );

  it.each(['disable', 'enable', 'shutdown', 'remove'] as const)(
    '%s: a bad server IP is refused, an unknown server not found, a bad target refused',
    async (verb) => {
      for (const [what, value, quoted] of BAD_IPS) {
        for (const target of [{ jobName: 'report', serverIp: value }, { serverIp: value }]) {
          const got = await failure(() => operator[verb](target as { serverIp: string }));
          expect({ what, target: Object.keys(target), got }).toEqual({
            what,
            target: Object.keys(target),
            got: invalid(verb, 'serverIp', ipDetail(quoted)),
          });
        }
      }
      for (const ip of UNKNOWN_IPS) {
        expect({ ip, got: await failure(() => operator[verb]({ jobName: 'report', serverIp: ip })) }).toEqual({
          ip,
          got: noServer(verb, `'${ip}'`, 'report'),
        });
        expect({ ip, got: await failure(() => operator[verb]({ serverIp: ip })) }).toEqual({
          ip,
          got: noServer(verb, `'${ip}'`, undefined),
        });
      }
      const targets: ReadonlyArray<readonly [unknown, Expected]> = [
        [{}, invalid(verb, 'target', 'name a jobName, a serverIp, or both')],
        [
          { jobName: 'report', serverIP: IP },
          invalid(verb, 'fields', `'serverIP' is not one; ${verb} takes jobName, serverIp`),
        ],
        ['report', invalid(verb, 'target', "must be { jobName?, serverIp? }, got 'report'")],
        [null, invalid(verb, 'target', 'must be { jobName?, serverIp? }, got null')],
        [[IP], invalid(verb, 'target', 'must be { jobName?, serverIp? }, got an array of 1')],
      ];
      for (const [target, expected] of targets) {
        expect({ target, got: await failure(() => operator[verb](target as { jobName: string })) }).toEqual({
          target,
          got: expected,
        });
      }
      await expectTreeUnchanged(verb);
    },
  );

  it('getJobsBriefInfo: a bad server IP is refused; an unknown one is in no job', async () => {
    for (const [what, value, quoted] of BAD_IPS) {
      expect({ what, got: await failure(() => operator.getJobsBriefInfo(value as string)) }).toEqual({
        what,
        got: invalid('getJobsBriefInfo', 'serverIp', ipDetail(quoted)),
      });
    }
    expect(await operator.getJobsBriefInfo('10.9.9.9')).toEqual([]);
    await expectTreeUnchanged('getJobsBriefInfo');
  });

  it.each(['disableItem', 'enableItem', 'rerunItem'] as const)('%s: items outside 0..2 are refused', async (verb) => {
    const items: ReadonlyArray<readonly [string, unknown, string]> = [
      ...BAD_ITEMS,
      ['NaN', NaN, 'must be an integer >= 0, got NaN'],
      ['Infinity', Infinity, 'must be an integer >= 0, got Infinity'],
      ['missing', undefined, 'must be an integer >= 0, got undefined'],
    ];
    for (const [what, value, detail] of items) {
      expect({ what, got: await failure(() => operator[verb]('report', value as number)) }).toEqual({
        what,
        got: invalid(verb, 'item', detail),
      });
    }
    await expectTreeUnchanged(verb);
  });

  it('trigger: job parameters and options that are not one are refused', async () => {
    for (const [what, value, detail] of BAD_PARAMETERS) {
      expect({ what, got: await failure(() => operator.trigger('report', { jobParameter: value as string })) }).toEqual(
        { what, got: invalid('trigger', 'jobParameter', detail) },
      );
    }
    expect(await failure(() => operator.trigger('report', { param: 'x' } as never))).toEqual(
      invalid('trigger', 'fields', "'param' is not one; trigger takes jobParameter"),
    );
    expect(await failure(() => operator.trigger('report', 'x' as never))).toEqual(
      invalid('trigger', 'options', "must be { jobParameter? }, got 'x'"),
    );
    await expectTreeUnchanged('trigger');
  });

  it('updateJobConfiguration: changes that are not an object of changeable fields, or too long, are refused', async () => {
    const verb = 'updateJobConfiguration';
    const changes: ReadonlyArray<readonly [unknown, Expected]> = [
      [null, invalid(verb, 'changes', 'must be an object of fields to change, got null')],
      ['cron=* * * * * *', invalid(verb, 'changes', "must be an object of fields to change, got 'cron=* * * * * *'")],
      [[], invalid(verb, 'changes', 'must be an object of fields to change, got an array of 0')],
      [{ color: 'blue' }, invalid(verb, 'fields', `'color' is not one; updateJobConfiguration takes ${CHANGEABLE}`)],
      [
        { jobName: 'other' },
        invalid(verb, 'fields', `'jobName' is not one; updateJobConfiguration takes ${CHANGEABLE}`),
      ],
      [{ description: HUGE }, invalid(verb, 'description', `is ${MB} bytes long; at most 65536`)],
      [
        { shardingTotalCount: -1 },
        {
          name: 'JobConfigurationError',
          code: 'INVALID_CONFIGURATION',
          message: "Job 'report': invalid 'shardingTotalCount': is required: an integer > 0, got -1",
        },
      ],
      // The item policies, kept in props (docs/guide/item-policies.md): negative, fractional, huge, not a number,
      // an unknown backoff, an unknown name.
      ...(
        [
          ['item.timeout.milliseconds', '-5', 'must be a whole number from 0 to 2147483647, got "-5"'],
          ['item.timeout.milliseconds', '1.5', 'must be a whole number from 0 to 2147483647, got "1.5"'],
          ['item.retry.attempts', '99999999999999', 'must be a whole number from 1 to 100, got "99999999999999"'],
          ['item.retry.delay.milliseconds', 'soon', 'must be a whole number from 0 to 2147483647, got "soon"'],
          ['item.retry.backoff', 'linear', `must be one of 'fixed', 'exponential', got "linear"`],
          ['item.overlap', 'serial', `must be one of 'misfire', 'cover-early', got "serial"`],
          ['item.retries', '3', `is no item policy; the names are ${ITEM_POLICY_NAMES}`],
        ] as const
      ).map(
        ([name, value, detail]) =>
          [
            { props: { [name]: value } },
            {
              name: 'JobConfigurationError',
              code: 'INVALID_CONFIGURATION',
              message: `Job 'report': invalid 'props.${name}': ${detail}`,
            },
          ] as const,
      ),
    ];
    for (const [change, expected] of [...changes, ...ALERT_CHANGES]) {
      const got = await failure(() => operator.updateJobConfiguration('report', change as never));
      expect({ change, got }).toEqual({ change, got: expected });
    }
    await expectTreeUnchanged(verb);
  });
});

// ------------------------------------------------------------------ the message patterns, over TCP and NATS

/** What a pattern answers, or the error its RpcException carried. */
async function ask(client: ClientProxy, pattern: string, payload: unknown): Promise<unknown> {
  try {
    return { answered: await firstValueFrom(client.send(pattern, payload)) };
  } catch (error) {
    return error;
  }
}

describe.each(['TCP', 'NATS'] as const)('the message patterns over %s refuse bad input', (transport) => {
  const patterns = {
    job: (jobName: unknown) => ({ jobName }),
    sharding: (jobName: unknown) => ({ jobName }),
    trigger: (jobName: unknown) => ({ jobName }),
    disable: (jobName: unknown) => ({ jobName }),
    enable: (jobName: unknown) => ({ jobName }),
    'disable-item': (jobName: unknown) => ({ jobName, item: 0 }),
    'enable-item': (jobName: unknown) => ({ jobName, item: 0 }),
    'rerun-item': (jobName: unknown) => ({ jobName, item: 0 }),
  } as const;

  it.each(Object.keys(patterns) as Array<keyof typeof patterns>)(
    '%s: bad payloads, job names and unknown jobs each get their error',
    async (name) => {
      const client = clients[transport];
      const operation = `elastic-job.${name}`;
      const fields =
        name === 'job' || name === 'sharding'
          ? 'jobName'
          : name === 'trigger'
            ? 'jobName, jobParameter'
            : name.endsWith('item')
              ? 'jobName, item'
              : 'jobName, ip';
      for (const [what, value, detail] of BAD_NAMES) {
        expect({ what, got: await ask(client, operation, patterns[name](value)) }).toEqual({
          what,
          got: invalid(operation, 'jobName', `must be a job's name, ${detail}`),
        });
      }
      for (const [value, quoted] of UNKNOWN_NAMES) {
        expect({ value, got: await ask(client, operation, patterns[name](value)) }).toEqual({
          value,
          got: noJob(quoted),
        });
      }
      const payloads: ReadonlyArray<readonly [unknown, Expected]> = [
        // (null and undefined are refused by Nest's clients themselves: InvalidMessageException.)
        ['report', invalid(operation, 'payload', `must be an object { ${fields} }, got 'report'`)],
        [42, invalid(operation, 'payload', `must be an object { ${fields} }, got 42`)],
        [['report'], invalid(operation, 'payload', `must be an object { ${fields} }, got an array of 1`)],
        [
          { ...patterns[name]('report'), serverIp: IP },
          invalid(operation, 'fields', `'serverIp' is not one; ${operation} takes ${fields}`),
        ],
        [
          { ...patterns[name]('report'), [HUGE]: 1 },
          invalid(operation, 'fields', `${HUGE_QUOTED} is not one; ${operation} takes ${fields}`),
        ],
        [
          {},
          name === 'disable' || name === 'enable'
            ? invalid(operation, 'jobName', 'give jobName, ip, or both')
            : invalid(operation, 'jobName', 'is required'),
        ],
      ];
      for (const [payload, expected] of payloads) {
        expect({ payload: String(payload).slice(0, 20), got: await ask(client, operation, payload) }).toEqual({
          payload: String(payload).slice(0, 20),
          got: expected,
        });
      }
      await expectTreeUnchanged(`${transport} ${name}`);
    },
  );

  it.each(['disable', 'enable'] as const)('%s: bad and unknown server IPs', async (name) => {
    const client = clients[transport];
    const operation = `elastic-job.${name}`;
    for (const [what, value, quoted] of BAD_IPS) {
      for (const payload of [{ jobName: 'report', ip: value }, { ip: value }]) {
        expect({ what, got: await ask(client, operation, payload) }).toEqual({
          what,
          got: invalid(operation, 'ip', ipDetail(quoted)),
        });
      }
    }
    for (const ip of UNKNOWN_IPS) {
      expect({ ip, got: await ask(client, operation, { jobName: 'report', ip }) }).toEqual({
        ip,
        got: noServer(name, `'${ip}'`, 'report'),
      });
      expect({ ip, got: await ask(client, operation, { ip }) }).toEqual({
        ip,
        got: noServer(name, `'${ip}'`, undefined),
      });
    }
    await expectTreeUnchanged(`${transport} ${name} ip`);
  });

  it.each(['disable-item', 'enable-item', 'rerun-item'] as const)('%s: items outside 0..2', async (name) => {
    const client = clients[transport];
    const operation = `elastic-job.${name}`;
    // The API's own check of the range names its verb (the payload's shape is the pattern's).
    const verb = ({ 'disable-item': 'disableItem', 'enable-item': 'enableItem', 'rerun-item': 'rerunItem' } as const)[
      name
    ];
    for (const [what, value, detail] of BAD_ITEMS) {
      const inRange = detail.startsWith('must be an item of the job');
      expect({ what, got: await ask(client, operation, { jobName: 'report', item: value }) }).toEqual({
        what,
        got: invalid(inRange ? verb : operation, 'item', detail),
      });
    }
    await expectTreeUnchanged(`${transport} ${name} item`);
  });

  it('trigger: bad job parameters; jobs: a payload with fields', async () => {
    const client = clients[transport];
    for (const [what, value, detail] of BAD_PARAMETERS) {
      expect({
        what,
        got: await ask(client, 'elastic-job.trigger', { jobName: 'report', jobParameter: value }),
      }).toEqual({ what, got: invalid('elastic-job.trigger', 'jobParameter', detail) });
    }
    expect(await ask(client, 'elastic-job.jobs', { jobName: 'report' })).toEqual(
      invalid('elastic-job.jobs', 'fields', "'jobName' is not one; elastic-job.jobs takes no fields"),
    );
    expect(await ask(client, 'elastic-job.jobs', 'all')).toEqual(
      invalid('elastic-job.jobs', 'payload', "must be an object, got 'all'"),
    );
    await expectTreeUnchanged(`${transport} trigger`);
  });
});

// ------------------------------------------------------------------ the CLI

/** The CLI in this process (a 1 MB argument does not fit in a real command line: Linux takes 128 KiB). */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (text: string) => void) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        append(chunk.toString('utf8'));
        done();
      },
    });
  const code = await runCli(['--zk', zkConnect(), '--namespace', NAMESPACE, ...args], {
    stdout: sink((text) => (stdout += text)),
    stderr: sink((text) => (stderr += text)),
    env: {},
  });
  return { code, stdout, stderr };
}

/** The first line of what the CLI said on stderr, without its name. */
const said = (stderr: string): string => stderr.split('\n')[0]!.replace(/^nestjs-elastic-job: /, '');

describe('the CLI refuses bad input: exit 2 for a bad argument, 3 for what is not there', () => {
  const commands: ReadonlyArray<readonly [string, (name: string) => string[], string]> = [
    ['job', (name) => ['job', name], 'job'],
    ['sharding', (name) => ['sharding', name], 'sharding'],
    ['config', (name) => ['config', name], 'config'],
    ['config --set', (name) => ['config', name, '--set', 'description=x'], 'config'],
    ['trigger', (name) => ['trigger', name], 'trigger'],
    ['disable', (name) => ['disable', name], 'disable'],
    ['enable', (name) => ['enable', name], 'enable'],
    ['shutdown', (name) => ['shutdown', name], 'shutdown'],
    ['remove', (name) => ['remove', name], 'remove'],
    ['disable-item', (name) => ['disable-item', name, '0'], 'disable-item'],
    ['enable-item', (name) => ['enable-item', name, '0'], 'enable-item'],
    ['rerun-item', (name) => ['rerun-item', name, '0'], 'rerun-item'],
    ['remove-job', (name) => ['remove-job', name], 'remove-job'],
    ['dump', (name) => ['dump', name], 'dump'],
  ];

  it.each(commands)('%s <name>: bad names exit 2, unknown jobs exit 3', async (label, argv) => {
    for (const [what, value, detail] of BAD_NAMES) {
      if (typeof value !== 'string') continue; // a command line has only text
      const result = await cli(...argv(value));
      expect({ what, code: result.code, said: said(result.stderr), stdout: result.stdout }).toEqual({
        what,
        code: EXIT_USAGE,
        said: `<name> must be a job's name, ${detail}`,
        stdout: '',
      });
    }
    for (const [value, quoted] of UNKNOWN_NAMES) {
      const result = await cli(...argv(value));
      expect({ value, code: result.code, stderr: result.stderr, stdout: result.stdout }).toEqual({
        value,
        code: EXIT_NOT_FOUND,
        stderr: `nestjs-elastic-job: ${noJob(quoted).message}\n`,
        stdout: '',
      });
    }
    await expectTreeUnchanged(`cli ${label}`);
  });

  it.each(['disable', 'enable', 'shutdown', 'remove'])(
    '%s --ip: bad IPs exit 2, unknown servers exit 3',
    async (command) => {
      for (const [what, value, quoted] of BAD_IPS) {
        if (typeof value !== 'string') continue; // a command line has only text
        for (const argv of [
          [command, 'report', '--ip', value],
          [command, '--ip', value],
        ]) {
          const result = await cli(...argv);
          expect({ what, code: result.code, said: said(result.stderr) }).toEqual({
            what,
            code: EXIT_USAGE,
            said: `--ip ${ipDetail(quoted)}`,
          });
        }
      }
      for (const ip of UNKNOWN_IPS) {
        for (const [argv, jobName] of [
          [[command, 'report', '--ip', ip], 'report'],
          [[command, '--ip', ip], undefined],
        ] as const) {
          const result = await cli(...argv);
          expect({ ip, code: result.code, stderr: result.stderr }).toEqual({
            ip,
            code: EXIT_NOT_FOUND,
            stderr: `nestjs-elastic-job: ${noServer(command, `'${ip}'`, jobName).message}\n`,
          });
        }
      }
      await expectTreeUnchanged(`cli ${command} --ip`);
    },
  );

  it('items, job parameters, configuration values and option values', async () => {
    const cases: ReadonlyArray<readonly [string[], number, string]> = [
      [['disable-item', 'report', 'two'], EXIT_USAGE, "<item> must be an item number (0, 1, ...), got 'two'"],
      [['disable-item', 'report', '1.5'], EXIT_USAGE, "<item> must be an item number (0, 1, ...), got '1.5'"],
      [
        ['disable-item', 'report', '-1'],
        EXIT_USAGE,
        // Node's util.parseArgs' own words (it leaves the last quote out).
        "Unknown option '-1'. To specify a positional argument starting with a '-', place it at the end of the " +
          `command after '--', as in '-- "-1"`,
      ],
      [
        ['disable-item', 'report', '99999999999999999999'],
        EXIT_USAGE,
        "<item> must be an item number (0, 1, ...), got '99999999999999999999'",
      ],
      [['disable-item', 'report', HUGE], EXIT_USAGE, `<item> must be an item number (0, 1, ...), got ${HUGE_QUOTED}`],
      [
        ['disable-item', 'report', '3'],
        EXIT_USAGE,
        "disableItem: invalid 'item': must be an item of the job, 0..2 (shardingTotalCount 3), got 3",
      ],
      [
        ['enable-item', 'report', '3'],
        EXIT_USAGE,
        "enableItem: invalid 'item': must be an item of the job, 0..2 (shardingTotalCount 3), got 3",
      ],
      [
        ['trigger', 'report', '--param', HUGE],
        EXIT_USAGE,
        `--param is ${MB} bytes long; at most 65536 (it is written once for each instance online)`,
      ],
      [
        ['config', 'report', '--set', `description=${HUGE}`],
        EXIT_USAGE,
        `updateJobConfiguration: invalid 'description': is ${MB} bytes long; at most 65536`,
      ],
      [
        ['config', 'report', '--set', 'shardingTotalCount=-1'],
        EXIT_USAGE,
        expect.stringMatching(/shardingTotalCount/) as never,
      ],
      ...ALERT_CHANGES.map(([change, expected]): readonly [string[], number, string] => [
        [
          'config',
          'report',
          '--set',
          `jobErrorHandlerType=${String(change.jobErrorHandlerType)}`,
          '--set',
          `props=${JSON.stringify(change.props)}`,
        ],
        EXIT_USAGE,
        expected.message,
      ]),
      [
        ['config', 'report', '--set', 'props={"item.retry.backoff":"linear"}'],
        EXIT_USAGE,
        `Job 'report': invalid 'props.item.retry.backoff': must be one of 'fixed', 'exponential', got "linear"`,
      ],
      [
        ['config', 'report', '--set', 'props={"item.timeout.milliseconds":"-1"}'],
        EXIT_USAGE,
        `Job 'report': invalid 'props.item.timeout.milliseconds': must be a whole number from 0 to 2147483647, got "-1"`,
      ],
      [['jobs', '--ip', HUGE], EXIT_USAGE, `--ip ${ipDetail(HUGE_QUOTED)}`],
      [
        [HUGE],
        EXIT_USAGE,
        `unknown command ${HUGE_QUOTED}; commands: jobs, job, servers, sharding, trigger, disable, enable, disable-item, enable-item, rerun-item, shutdown, remove, remove-job, config, dump, workflow-trigger, workflow-runs, workflow-rerun, workflow-cancel, workflows`,
      ],
      [['jobs', '--timeout', HUGE], EXIT_USAGE, `--timeout takes milliseconds (an integer > 0), got ${HUGE_QUOTED}`],
    ];
    for (const [argv, code, message] of cases) {
      const result = await cli(...argv);
      const shown = argv.map((arg) => arg.slice(0, 30));
      expect({ shown, code: result.code, said: said(result.stderr) }).toEqual({ shown, code, said: message });
    }
    await expectTreeUnchanged('cli values');
  });

  it('exit codes are the codes errors have on every surface', () => {
    expect(ELASTIC_JOB_ERROR_CODES.INVALID_ARGUMENT.cliExit).toBe(EXIT_USAGE);
    expect(ELASTIC_JOB_ERROR_CODES.INVALID_CONFIGURATION.cliExit).toBe(EXIT_USAGE);
    expect(ELASTIC_JOB_ERROR_CODES.JOB_NOT_FOUND.cliExit).toBe(EXIT_NOT_FOUND);
    expect(ELASTIC_JOB_ERROR_CODES.SERVER_NOT_FOUND.cliExit).toBe(EXIT_NOT_FOUND);
    expect(ELASTIC_JOB_ERROR_CODES.REGISTRY_ERROR.cliExit).toBe(EXIT_FAILED);
  });
});

// ------------------------------------------------------------------ the console

/**
 * A console route's answer: its status and JSON body (or text, for what Node itself refuses). Sent with node:http and
 * the path as written: fetch would resolve a `%2E%2E` segment as `..` before sending, as browsers do.
 */
function route(
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port: consolePort,
        method,
        path: `/elastic-job/${path}`,
        headers: method !== 'GET' ? { 'content-type': 'application/json', ...csrf } : {},
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // Node's own refusals have no JSON body
          }
          resolve({ status: response.statusCode!, body: parsed });
        });
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

/** The JSON a console route answers with for a library error. */
function http(status: number, expected: Expected): { status: number; body: unknown } {
  return { status, body: { statusCode: status, ...expected } };
}

/**
 * A name as a path segment: every character that is not plain percent-encoded (a '/' stays in the segment, '..' is
 * not resolved by the client); undefined for text a URL cannot carry (a lone surrogate is no UTF-8).
 */
function segment(value: string): string {
  return encodeURIComponent(value).replace(/\./g, '%2E');
}

function encodable(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value !== '' &&
    value.length <= 1000 &&
    !/[\ud800-\udfff]/.test(value.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ''))
  );
}

describe('the console refuses bad input with the same errors as HTTP statuses', () => {
  const jobRoutes: ReadonlyArray<readonly [string, 'GET' | 'POST', (name: string) => string, string]> = [
    ['job', 'GET', (name) => `api/jobs/${name}`, 'job'],
    ['trigger', 'POST', (name) => `api/jobs/${name}/trigger`, 'trigger'],
    ['disable', 'POST', (name) => `api/jobs/${name}/disable`, 'disable'],
    ['enable', 'POST', (name) => `api/jobs/${name}/enable`, 'enable'],
    ['shutdown', 'POST', (name) => `api/jobs/${name}/shutdown`, 'shutdown'],
    ['disable item', 'POST', (name) => `api/jobs/${name}/items/0/disable`, 'disableItem'],
    ['enable item', 'POST', (name) => `api/jobs/${name}/items/0/enable`, 'enableItem'],
    ['rerun item', 'POST', (name) => `api/jobs/${name}/items/0/rerun`, 'rerunItem'],
    ['disable on a server', 'POST', (name) => `api/jobs/${name}/servers/${IP}/disable`, 'disable'],
    ['shutdown on a server', 'POST', (name) => `api/jobs/${name}/servers/${IP}/shutdown`, 'shutdown'],
  ];

  it.each(jobRoutes)(
    '%s: bad job names 400, unknown jobs 404, a 1 MB path refused by Node',
    async (label, method, path, operation) => {
      for (const [what, value, detail] of BAD_NAMES) {
        if (!encodable(value)) continue; // a path has only text, of some length
        expect({ what, got: await route(method, path(segment(value))) }).toEqual({
          what,
          got: http(400, invalid(operation, 'jobName', `must be a job's name, ${detail}`)),
        });
      }
      for (const [value, quoted] of UNKNOWN_NAMES) {
        expect({ value, got: await route(method, path(segment(value))) }).toEqual({
          value,
          got: http(404, noJob(quoted)),
        });
      }
      // Longer than Node's 16 KiB of headers: answered 431 by Node, before any route.
      expect((await route(method, path(HUGE))).status).toBe(431);
      await expectTreeUnchanged(`console ${label}`);
    },
  );

  it('server routes: bad IPs 400, unknown servers 404', async () => {
    for (const [what, value, quoted] of BAD_IPS) {
      if (!encodable(value)) continue;
      for (const [path, operation] of [
        [`api/jobs/report/servers/${segment(value)}/disable`, 'disable'],
        [`api/jobs/report/servers/${segment(value)}/shutdown`, 'shutdown'],
        [`api/servers/${segment(value)}/enable`, 'enable'],
      ] as const) {
        expect({ what, path: path.slice(0, 40), got: await route('POST', path) }).toEqual({
          what,
          path: path.slice(0, 40),
          got: http(400, invalid(operation, 'ip', ipDetail(quoted))),
        });
      }
    }
    for (const ip of UNKNOWN_IPS) {
      expect(await route('POST', `api/jobs/report/servers/${segment(ip)}/disable`)).toEqual(
        http(404, noServer('disable', `'${ip}'`, 'report')),
      );
      expect(await route('POST', `api/servers/${segment(ip)}/disable`)).toEqual(
        http(404, noServer('disable', `'${ip}'`, undefined)),
      );
    }
    await expectTreeUnchanged('console servers');
  });

  it('items, trigger bodies and query values', async () => {
    const cases: ReadonlyArray<
      readonly [string, 'GET' | 'POST' | 'PUT', string, unknown, { status: number; body: unknown }]
    > = [
      [
        'a word item',
        'POST',
        'api/jobs/report/items/two/disable',
        undefined,
        http(400, invalid('disableItem', 'item', "must be an integer >= 0, got 'two'")),
      ],
      [
        'a negative item',
        'POST',
        'api/jobs/report/items/-1/disable',
        undefined,
        http(400, invalid('disableItem', 'item', "must be an integer >= 0, got '-1'")),
      ],
      [
        'a fractional item',
        'POST',
        'api/jobs/report/items/1.5/enable',
        undefined,
        http(400, invalid('enableItem', 'item', "must be an integer >= 0, got '1.5'")),
      ],
      [
        'an item out of range',
        'POST',
        'api/jobs/report/items/3/disable',
        undefined,
        http(400, invalid('disableItem', 'item', 'must be an item of the job, 0..2 (shardingTotalCount 3), got 3')),
      ],
      [
        'a huge item',
        'POST',
        'api/jobs/report/items/99999999999999999999/disable',
        undefined,
        http(400, invalid('disableItem', 'item', 'must be an integer >= 0, got 100000000000000000000')),
      ],
      [
        'a number parameter',
        'POST',
        'api/jobs/report/trigger',
        { jobParameter: 42 },
        http(400, invalid('trigger', 'jobParameter', 'must be a string, got 42')),
      ],
      [
        'an unknown body field',
        'POST',
        'api/jobs/report/trigger',
        { param: 'x' },
        http(400, invalid('trigger', 'fields', "'param' is not one; trigger takes jobParameter")),
      ],
      [
        'an array body',
        'POST',
        'api/jobs/report/trigger',
        ['x'],
        http(400, invalid('trigger', 'body', 'must be { jobParameter? }, got an array of 1')),
      ],
      [
        'a parameter over 64 KiB',
        'POST',
        'api/jobs/report/trigger',
        { jobParameter: 'x'.repeat(70_000) },
        http(
          400,
          invalid(
            'trigger',
            'jobParameter',
            'is 70000 bytes long; at most 65536 (it is written once for each instance online)',
          ),
        ),
      ],
      [
        'a 1 MB body',
        'POST',
        'api/jobs/report/trigger',
        { jobParameter: HUGE },
        { status: 413, body: expect.objectContaining({ statusCode: 413 }) },
      ],
      [
        'a bad executions job',
        'GET',
        `api/executions?job=${segment('..')}`,
        undefined,
        http(
          400,
          invalid('executions', 'job', "must be a job's name, got '..': it is a relative path segment ('.' or '..')"),
        ),
      ],
      [
        'a bad status filter',
        'GET',
        `api/jobs?status=${'X'.repeat(100)}`,
        undefined,
        http(
          400,
          invalid(
            'query',
            'status',
            `must be one of OK, CRASHED, DISABLED, SHARDING_FLAG, got '${'X'.repeat(63)}…' (100 characters)`,
          ),
        ),
      ],
      [
        'an item timeout that is not a number',
        'PUT',
        'api/jobs/report/config',
        { props: { 'item.timeout.milliseconds': 'soon' } },
        http(400, {
          name: 'JobConfigurationError',
          code: 'INVALID_CONFIGURATION',
          message:
            "Job 'report': invalid 'props.item.timeout.milliseconds': must be a whole number from 0 to 2147483647, " +
            'got "soon"',
        }),
      ],
      [
        'an unknown backoff',
        'PUT',
        'api/jobs/report/config',
        { props: { 'item.retry.attempts': '3', 'item.retry.backoff': 'linear' } },
        http(400, {
          name: 'JobConfigurationError',
          code: 'INVALID_CONFIGURATION',
          message: `Job 'report': invalid 'props.item.retry.backoff': must be one of 'fixed', 'exponential', got "linear"`,
        }),
      ],
      [
        'a bad limit',
        'GET',
        'api/jobs?limit=1e3',
        undefined,
        http(400, invalid('query', 'limit', "must be an integer 1..200, got '1e3'")),
      ],
      [
        'an unknown action',
        'POST',
        `api/jobs/report/${'x'.repeat(100)}`,
        undefined,
        {
          status: 404,
          body: expect.objectContaining({
            message: `No job action '${'x'.repeat(63)}…' (100 characters): disable, enable, shutdown or trigger`,
          }),
        },
      ],
    ];
    for (const [what, method, path, body, expected] of cases) {
      expect({ what, got: await route(method, path, body) }).toEqual({ what, got: expected });
    }
    await expectTreeUnchanged('console values');
  });
});

// ------------------------------------------------------------------ garbage others wrote (last: it changes the tree)

describe('what others wrote into the tree is refused, not guessed at; nothing is written for a job that is gone', () => {
  it('a config node that is not YAML: its own calls answer INVALID_STORED_DATA, the list still answers', async () => {
    const zk = await startRegistry({ namespace: NAMESPACE });
    try {
      await zk.createWithParents('/broken/config', Buffer.from('cron: [unclosed\n'), 'PERSISTENT');
      await zk.createWithParents('/broken/sharding', Buffer.alloc(0), 'PERSISTENT');
      const stored: Expected = {
        name: 'StoredConfigurationError',
        code: 'INVALID_STORED_DATA',
        message: expect.stringMatching(/^Job 'broken': invalid '\w+': the stored configuration /) as never,
      };
      expect(await failure(() => operator.getJobConfiguration('broken'))).toEqual(stored);
      expect(await failure(() => operator.disableItem('broken', 0))).toEqual(stored);
      expect(await zk.getChildren('/broken/sharding')).toEqual([]); // no item guessed at
      for (const transport of ['TCP', 'NATS'] as const)
        expect(await ask(clients[transport], 'elastic-job.job', { jobName: 'broken' })).toEqual(stored);
      expect(await route('GET', 'api/jobs/broken')).toEqual(http(409, stored));
      const list = await route('GET', 'api/jobs');
      expect(list.status).toBe(200);
      expect((list.body as { jobs: Array<{ jobName: string }> }).jobs.map((job) => job.jobName)).toEqual([
        'broken',
        'report',
      ]);
      const config = await cli('config', 'broken');
      expect({ code: config.code, said: said(config.stderr) }).toEqual({
        code: EXIT_FAILED,
        said: expect.stringMatching(/^Job 'broken': invalid '\w+': the stored configuration /),
      });

      // A job being removed (Curator deletes children first: the config node is gone, the root not yet): an
      // operation racing the removal writes nothing back into it.
      await zk.createWithParents('/half/instances', Buffer.alloc(0), 'PERSISTENT');
      await expect(
        createWhileJobExists(zk, new JobNodePath('half'), [{ path: '/half/trigger' }, { path: '/half/trigger/x@-@1' }]),
      ).rejects.toThrow(JobNotFoundError);
      expect(await zk.getChildren('/half')).toEqual(['instances']);
    } finally {
      await zk.close();
    }
  });
});

// ------------------------------------------------------------------ workflows (docs/guide/workflows.md)

/** What a workflow no instance declared gives, on every surface. */
/** The tree as the workflow blocks found it (blocks before them leave foreign nodes of their own behind). */
let workflowBefore: string[] = [];
async function expectTreeUnchangedSinceWorkflows(label: string): Promise<void> {
  expect({ label, tree: await snapshots.take() }).toEqual({ label, tree: workflowBefore });
}

function noWorkflow(verb: string, quoted: string): Expected {
  return {
    name: 'WorkflowNotFoundError',
    code: 'WORKFLOW_NOT_FOUND',
    message:
      `${verb}: no workflow ${quoted} in this namespace (no instance declaring it has started): check the name; the ` +
      'workflows query lists the workflows there',
  };
}

describe('the workflow verbs refuse bad input before writing anything', () => {
  beforeAll(async () => {
    workflowBefore = await snapshots.take();
  });

  const verbs: ReadonlyArray<readonly [string, (name: unknown) => Promise<unknown>]> = [
    ['triggerWorkflow', (name) => operator.triggerWorkflow(name as string)],
    ['getWorkflowRuns', (name) => operator.getWorkflowRuns(name as string)],
    ['rerunWorkflowStep', (name) => operator.rerunWorkflowStep(name as string, 'r1', 'report')],
    ['cancelWorkflowRun', (name) => operator.cancelWorkflowRun(name as string, 'r1')],
  ];

  it.each(verbs)('%s: a bad workflow name is refused, an unknown one too', async (verb, call) => {
    for (const [what, value, detail] of BAD_NAMES) {
      expect({ what, got: await failure(() => call(value)) }).toEqual({
        what,
        got: invalid(verb, 'name', `must be a workflow's name, ${detail}`),
      });
    }
    for (const [value, quoted] of UNKNOWN_NAMES)
      expect({ value, got: await failure(() => call(value)) }).toEqual({ value, got: noWorkflow(verb, quoted) });
    await expectTreeUnchangedSinceWorkflows(verb);
  });

  it('rerunWorkflowStep and cancelWorkflowRun: bad run ids, steps and items', async () => {
    for (const [what, value, detail] of BAD_NAMES) {
      expect({ what, got: await failure(() => operator.cancelWorkflowRun('w', value as string)) }).toEqual({
        what,
        got: invalid('cancelWorkflowRun', 'runId', `must be a run's id, ${detail}`),
      });
      expect({ what, got: await failure(() => operator.rerunWorkflowStep('w', 'r1', value as string)) }).toEqual({
        what,
        got: invalid('rerunWorkflowStep', 'job', `must be a job's name, ${detail}`),
      });
    }
    expect(await failure(() => operator.rerunWorkflowStep('w', 'r1', 'report', { items: 'some' as 'all' }))).toEqual(
      invalid('rerunWorkflowStep', 'items', "must be 'failed' or 'all', got 'some'"),
    );
    await expectTreeUnchangedSinceWorkflows('workflow run ids');
  });
});

describe.each(['TCP', 'NATS'] as const)('the workflow message patterns over %s refuse bad input', (transport) => {
  beforeAll(async () => {
    workflowBefore = await snapshots.take();
  });

  const patterns = {
    'workflow-trigger': { verb: 'triggerWorkflow', payload: (workflow: unknown) => ({ workflow }) },
    'workflow-runs': { verb: 'getWorkflowRuns', payload: (workflow: unknown) => ({ workflow }) },
    'workflow-rerun-step': {
      verb: 'rerunWorkflowStep',
      payload: (workflow: unknown) => ({ workflow, runId: 'r1', jobName: 'report' }),
    },
    'workflow-cancel': { verb: 'cancelWorkflowRun', payload: (workflow: unknown) => ({ workflow, runId: 'r1' }) },
  } as const;

  it.each(Object.keys(patterns) as Array<keyof typeof patterns>)('%s: bad and unknown workflows', async (name) => {
    const client = clients[transport];
    const operation = `elastic-job.${name}`;
    const { verb, payload } = patterns[name];
    for (const [what, value, detail] of BAD_NAMES) {
      expect({ what, got: await ask(client, operation, payload(value)) }).toEqual({
        what,
        got: invalid(operation, 'workflow', `must be a workflow's name, ${detail}`),
      });
    }
    for (const [value, quoted] of UNKNOWN_NAMES)
      expect({ value, got: await ask(client, operation, payload(value)) }).toEqual({
        value,
        got: noWorkflow(verb, quoted),
      });
    expect(await ask(client, operation, {})).toEqual(invalid(operation, 'workflow', 'is required'));
    expect(await ask(client, operation, { ...payload('w'), serverIp: IP })).toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expectTreeUnchangedSinceWorkflows(`${transport} ${name}`);
  });
});
