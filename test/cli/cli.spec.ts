import { Injectable } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ElasticJobOperator,
  ElasticJobRegistry,
  ShardedJob,
  type ShardingContext,
  type ShardingInfo,
} from '../../lib/index.js';
import type { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import { appOptions, bootApp } from '../support/app.js';
import { cliOn, misalignedRows, runCli, runCliHere, startCliOn, tableRows } from '../support/cli.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * The CLI against two apps running in this process (told apart by `instance.ip`): as operators run it,
 * `node build/lib/cli/main.js` in a process of its own, for what only a process has (arguments, exit status,
 * ZK_CONNECT, Ctrl-C in watch mode), and each command through the same entry function in this process (cliOn). Each command: its human output, its `--json` (the operator API's
 * value), its exit code, and for writes the znodes written and the apps' reaction. The tests run in order: the
 * writes come after the reads, the removals last.
 */

const IPS = ['10.0.9.1', '10.0.9.2'] as const;
const onDemandRuns: number[] = [];
const onDemandParameters: string[] = [];

@Injectable()
class CliJobs {
  @ShardedJob({
    jobName: 'steady',
    cron: '* * * * * *',
    shardingTotalCount: 4,
    shardingItemParameters: '0=a,1=b',
    description: 'every second',
  })
  steady(): void {}

  @ShardedJob({ jobName: 'on-demand', cron: '0 0 0 1 1 *', shardingTotalCount: 2 })
  onDemand(context: ShardingContext): void {
    onDemandRuns.push(context.shardingItem);
    onDemandParameters.push(context.jobParameter);
  }
}

let namespace: string;
let apps: TestingModule[];
let operator: ElasticJobOperator;
let zk: ZookeeperRegistryCenter;
const instanceOf = (ip: string): string => `${ip}@-@${process.pid}`;

beforeAll(async () => {
  namespace = uniqueNamespace('cli');
  apps = [];
  for (const ip of IPS) {
    const app = await bootApp(appOptions(namespace, { instance: { ip } }), [CliJobs]);
    hold(() => app.close());
    apps.push(app);
  }
  operator = await ElasticJobOperator.connect({ serverLists: zkConnect(), namespace });
  hold(() => operator.close());
  zk = await observer(namespace);
  await eventually(
    () => operator.getShardingInfo('steady'),
    (items) => items.length === 4 && items.every((item) => item.instanceId !== undefined),
    20_000,
    'the steady job sharded over the two apps',
  );
  // The leader shards 'on-demand' once registered (issue 43); its items are taken away here, as a job whose
  // sharding was never written shows them (the `jobs` status and the `sharding` message for such a job). Its
  // first firing shards it again (items without a live owner).
  await eventually(
    () => zk.exists('/on-demand/sharding/1/instance'),
    (stat) => stat !== undefined,
    20_000,
    "the on-demand job's sharding at start-up",
  );
  for (const item of [0, 1]) await zk.removeRecursive(`/on-demand/sharding/${item}`);
});

afterAll(async () => {
  await releaseAll();
});

/** Sharding without the status, which flips between PENDING and RUNNING every second for the steady job. */
const placement = (items: readonly ShardingInfo[]) =>
  items.map(({ item, serverIp, instanceId, failover }) => ({ item, serverIp, instanceId, failover }));

describe('nestjs-elastic-job CLI', () => {
  it('refuses a bad command line with exit 2 and the usage, before connecting', async () => {
    const [noCommand, noNamespace, noZk] = await Promise.all([
      runCli([]),
      runCli(['jobs', '--zk', zkConnect()]),
      runCli(['jobs', '--namespace', namespace]),
    ]);
    expect(noCommand.code).toBe(2);
    expect(noCommand.stderr).toMatch(/no command given/);
    expect(noCommand.stderr).toMatch(/Usage: nestjs-elastic-job <command>/);
    expect(noCommand.stdout).toBe('');

    expect(noNamespace.code).toBe(2);
    expect(noNamespace.stderr).toMatch(/--namespace is required/);
    expect(noNamespace.stderr).toMatch(/Commands:\n {2}jobs/);

    expect(noZk.code).toBe(2);
    expect(noZk.stderr).toMatch(/--zk host:port\[,\.\.\.\] is required \(or set ZK_CONNECT\)/);

    // Run side by side, in this process (the three above are processes of their own).
    const refusals = [
      [['nope'], /unknown command 'nope'; commands: jobs, job, servers/],
      [['jobs', '--bogus'], /Unknown option '--bogus'/],
      [['job'], /'job' takes 1 argument, got 0; usage: job <name>/],
      [['servers', '--ip', '10.0.9.1'], /--ip does not apply to 'servers'/],
      [['disable'], /name a job, a server \(--ip IP\), or both/],
      [['disable-item', 'steady', 'two'], /<item> must be an item number/],
      [['config', 'steady', '--set', 'misfire=maybe'], /--set misfire takes true or false, got 'maybe'/],
      [['config', 'steady', '--set', 'description'], /--set takes key=value/],
      [['jobs', '--timeout', 'soon'], /--timeout takes milliseconds/],
      [['jobs', '--namespace', '/a'], /invalid --namespace: must be a ZooKeeper node name.*starts with '\/'/],
    ] as const;
    const results = await Promise.all(
      refusals.map(([args]) => runCliHere(['--zk', zkConnect(), '--namespace', namespace, ...args])),
    );
    refusals.forEach(([args, message], index) => {
      expect({ args, code: results[index]!.code }).toEqual({ args, code: 2 });
      expect(results[index]!.stderr).toMatch(message);
    });

    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(
      /Exit codes: 0 done, 1 the operation failed \(the reason on stderr\), 2 bad usage or a bad argument,\n +3 no such job or server\./,
    );
  });

  it('says so within the connection timeout when ZooKeeper cannot be reached (exit 1)', async () => {
    const result = await runCli(['--zk', '127.0.0.1:1', '--namespace', namespace, '--timeout', '1000', 'jobs']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /could not connect to ZooKeeper at 127\.0\.0\.1:1 within 1000 ms: check --zk \(or ZK_CONNECT\)/,
    );
    expect(result.stdout).toBe('');
    expect(result.ms).toBeGreaterThanOrEqual(1000);
    // Not the client's endless retries: it ends (a loaded machine's Node start-up is not what this checks).
    expect(result.ms).toBeLessThan(1000 + 30_000);
  });

  it('jobs: an aligned table, or the API value with --json; --zk from ZK_CONNECT; --ip for one server', async () => {
    const human = await cliOn(namespace, 'jobs');
    expect(human.code).toBe(0);
    expect(human.stderr).toBe('');
    expect(tableRows(human.stdout)).toEqual([
      ['JOB', 'STATUS', 'CRON', 'INSTANCES', 'ITEMS', 'DESCRIPTION'],
      ['on-demand', 'SHARDING_FLAG', '0 0 0 1 1 *', '2', '2'],
      ['steady', 'OK', '* * * * * *', '2', '4', 'every second'],
    ]);
    expect(misalignedRows(human.stdout)).toEqual([]);

    const json = await runCli(['--namespace', namespace, 'jobs', '--json'], { ZK_CONNECT: zkConnect() });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(await operator.getAllJobsBriefInfo());

    const onServer = await cliOn(namespace, 'jobs', '--ip', IPS[0], '--json');
    expect(JSON.parse(onServer.stdout)).toEqual(await operator.getJobsBriefInfo(IPS[0]));
    expect(JSON.parse(onServer.stdout)).toMatchObject([{ instanceCount: 1 }, { instanceCount: 1 }]);

    const empty = await cliOn(uniqueNamespace('cli-empty'), 'jobs');
    expect(empty).toMatchObject({ code: 0, stdout: expect.stringMatching(/^No jobs in namespace 'cli-empty-/) });
  });

  it('job <name>: one row; an unknown job fails with exit 3, naming no other job', async () => {
    const human = await cliOn(namespace, 'job', 'steady');
    expect(tableRows(human.stdout)).toEqual([
      ['JOB', 'STATUS', 'CRON', 'INSTANCES', 'ITEMS', 'DESCRIPTION'],
      ['steady', 'OK', '* * * * * *', '2', '4', 'every second'],
    ]);
    const json = await cliOn(namespace, 'job', 'steady', '--json');
    expect(JSON.parse(json.stdout)).toEqual(await operator.getJobBriefInfo('steady'));

    for (const args of [
      ['job', 'nope'],
      ['sharding', 'nope'],
      ['config', 'nope'],
      ['trigger', 'nope', '--json'],
    ]) {
      const unknown = await cliOn(namespace, ...args);
      expect({ args, code: unknown.code, stdout: unknown.stdout }).toEqual({ args, code: 3, stdout: '' });
      expect(unknown.stderr).toBe(
        "nestjs-elastic-job: No job named 'nope' in this namespace (it has no config node): check the name and the " +
          'namespace; the jobs query lists the jobs there\n',
      );
    }
  });

  it('servers: one row per IP with its instances, jobs and disabled jobs', async () => {
    const human = await cliOn(namespace, 'servers');
    expect(tableRows(human.stdout)).toEqual([
      ['SERVER', 'INSTANCES', 'JOBS', 'DISABLED'],
      [IPS[0], '1', '2', '0'],
      [IPS[1], '1', '2', '0'],
    ]);
    expect(misalignedRows(human.stdout)).toEqual([]);
    const json = await cliOn(namespace, 'servers', '--json');
    expect(JSON.parse(json.stdout)).toEqual(await operator.getAllServersBriefInfo());
  });

  it('sharding <name>: each item with its status, server, instance and failover', async () => {
    const human = await cliOn(namespace, 'sharding', 'steady');
    expect(human.code).toBe(0);
    const [header, ...rows] = tableRows(human.stdout);
    expect(header).toEqual(['ITEM', 'STATUS', 'SERVER', 'INSTANCE', 'FAILOVER']);
    const items = await operator.getShardingInfo('steady');
    expect(rows.map(([item, , server, instance, failover]) => [item, server, instance, failover])).toEqual(
      items.map((item) => [String(item.item), item.serverIp, item.instanceId, 'no']),
    );
    for (const row of rows) expect(['PENDING', 'RUNNING']).toContain(row[1]);
    expect(misalignedRows(human.stdout)).toEqual([]);

    const json = await cliOn(namespace, 'sharding', 'steady', '--json');
    expect(placement(JSON.parse(json.stdout) as ShardingInfo[])).toEqual(placement(items));

    const never = await cliOn(namespace, 'sharding', 'on-demand');
    expect(never).toMatchObject({
      code: 0,
      stdout: "Job 'on-demand' has no sharding yet: its leader shards it before its first firing.\n",
    });
  });

  it('config <name>: key: value lines or the API value; --set changes fields by their type', async () => {
    const human = await cliOn(namespace, 'config', 'steady');
    expect(human.code).toBe(0);
    const lines = human.stdout.trimEnd().split('\n');
    expect(lines).toContain('jobName:                  steady');
    expect(lines).toContain('shardingItemParameters:   0=a,1=b');
    expect(lines).toContain('timeZone:                 -');
    expect(lines).toContain('monitorExecution:         true');
    expect(lines).toContain('jobParameter:');
    const json = await cliOn(namespace, 'config', 'steady', '--json');
    expect(JSON.parse(json.stdout)).toEqual({ ...(await operator.getJobConfiguration('steady')) });

    const set = await cliOn(
      namespace,
      'config',
      'on-demand',
      '--set',
      'description=nightly report',
      '--set',
      'misfire=false',
      '--set',
      'maxTimeDiffSeconds=30',
      '--set',
      'shardingItemParameters=0=eu,1=us',
      '--set',
      'timeZone=Europe/Berlin',
      '--json',
    );
    expect(set.code).toBe(0);
    const updated = await operator.getJobConfiguration('on-demand');
    expect(updated).toMatchObject({
      description: 'nightly report',
      misfire: false,
      maxTimeDiffSeconds: 30,
      shardingItemParameters: '0=eu,1=us',
      timeZone: 'Europe/Berlin',
    });
    expect(JSON.parse(set.stdout)).toEqual(updated);
    const back = await cliOn(namespace, 'config', 'on-demand', '--set', 'timeZone=', '--set', 'misfire=true');
    expect(back.stdout).toMatch(/^Updated the configuration of job 'on-demand':\njobName: +on-demand\n/);
    // The cron's next fire times, as a check that it means what was meant (1 January, midnight).
    expect(back.stdout).toMatch(/\nnext firings: \w{3} \d{4}-01-01 00:00:00, \w{3} \d{4}-01-01 00:00:00, .* \(.+\)\n$/);
    expect(await operator.getJobConfiguration('on-demand')).toMatchObject({ timeZone: undefined, misfire: true });

    const version = (await zk.exists('/on-demand/config'))!.version;
    const unknownField = await cliOn(namespace, 'config', 'on-demand', '--set', 'color=blue');
    expect(unknownField.code).toBe(2);
    expect(unknownField.stderr).toMatch(
      /updateJobConfiguration: invalid 'fields': 'color' is not one; updateJobConfiguration takes cron, /,
    );
    const badCron = await cliOn(namespace, 'config', 'on-demand', '--set', 'cron=every day');
    expect(badCron.code).toBe(2);
    expect(badCron.stderr).toMatch(/Job 'on-demand': invalid 'cron'/);
    expect((await zk.exists('/on-demand/config'))!.version).toBe(version); // nothing written
  });

  it('dump [name]: every node as `path | value`, or {path, value} objects', async () => {
    const job = await cliOn(namespace, 'dump', 'on-demand');
    expect(job.code).toBe(0);
    const lines = job.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('/on-demand | CliJobs.onDemand');
    expect(lines).toContain(`/on-demand/servers/${IPS[0]} | ENABLED`);
    expect(lines).toContain('/on-demand/servers |');
    const config = lines.find((line) => line.startsWith('/on-demand/config | '))!;
    expect(config).toMatch(/cron: 0 0 0 1 1 \?\\n/); // one line: the YAML's line breaks written \n
    expect(lines.every((line) => line.startsWith('/on-demand'))).toBe(true);

    const json = await cliOn(namespace, 'dump', '--json');
    const nodes = JSON.parse(json.stdout) as Array<{ path: string; value: string }>;
    const stored = (await zk.getData('/on-demand/config'))!.data.toString('utf8');
    expect(nodes).toContainEqual({ path: '/on-demand/config', value: stored });
    expect(nodes).toContainEqual({
      path: `/steady/instances/${instanceOf(IPS[1])}`,
      value: expect.stringMatching(/serverIp: 10\.0\.9\.2/),
    });
    // Parents before children, jobs in name order.
    const paths = nodes.map((node) => node.path);
    expect(paths.indexOf('/on-demand')).toBeLessThan(paths.indexOf('/on-demand/config'));
    expect(paths.indexOf('/on-demand/config')).toBeLessThan(paths.indexOf('/steady'));

    const unknown = await cliOn(namespace, 'dump', 'nope');
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toMatch(/No job named 'nope'/);
  });

  it('trigger <name>: every online instance runs the job once', async () => {
    const json = await cliOn(namespace, 'trigger', 'on-demand', '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(IPS.map(instanceOf));
    await eventually(
      () => [...onDemandRuns].sort(),
      (items) => items.join() === '0,1',
      15_000,
      'both items run',
    );
    const human = await cliOn(namespace, 'trigger', 'on-demand');
    expect(human.stdout).toBe(
      `Triggered job 'on-demand' on 2 instances:\nINSTANCE\n${IPS.map(instanceOf).join('\n')}\n`,
    );
    // --param: the job parameter of that run, on every instance.
    await eventually(
      () => onDemandRuns.length,
      (n) => n >= 4,
      15_000,
      'the second trigger',
    );
    onDemandParameters.length = 0;
    expect((await cliOn(namespace, 'trigger', 'on-demand', '--param', 'full')).code).toBe(0);
    await eventually(
      () => onDemandParameters,
      (seen) => seen.length >= 2,
      15_000,
      'the run with --param',
    );
    expect(onDemandParameters).toEqual(['full', 'full']);
  });

  it('disable / enable <name> [--ip IP]: servers/{ip} written, as ElasticJob targets them', async () => {
    const one = await cliOn(namespace, 'disable', 'steady', '--ip', IPS[0]);
    expect(one.code).toBe(0);
    expect(one.stdout).toBe(
      `Disabled 1 server node for job 'steady' on server ${IPS[0]}:\nJOB     SERVER\nsteady  ${IPS[0]}\n`,
    );
    expect((await zk.getData(`/steady/servers/${IPS[0]}`))?.data.toString()).toBe('DISABLED');
    const servers = await cliOn(namespace, 'servers', '--json');
    expect(JSON.parse(servers.stdout)).toMatchObject([
      { serverIp: IPS[0], disabledJobsNum: 1 },
      { disabledJobsNum: 0 },
    ]);

    const everywhere = await cliOn(namespace, 'enable', '--ip', IPS[0], '--json');
    expect(JSON.parse(everywhere.stdout)).toEqual([
      { jobName: 'on-demand', serverIp: IPS[0] },
      { jobName: 'steady', serverIp: IPS[0] },
    ]);
    expect((await zk.getData(`/steady/servers/${IPS[0]}`))?.data.toString()).toBe('ENABLED');

    // A server no job knows: nothing written (ElasticJob's own API would create servers/10.9.9.9 in every job).
    const unknown = await cliOn(namespace, 'disable', '--ip', '10.9.9.9');
    expect(unknown).toMatchObject({ code: 3, stdout: '' });
    expect(unknown.stderr).toMatch(
      /^nestjs-elastic-job: disable: no server '10\.9\.9\.9' in any job of this namespace/,
    );
    expect(await zk.exists('/steady/servers/10.9.9.9')).toBeUndefined();
  });

  it('disable-item / enable-item <name> <item>: sharding/{item}/disabled; an item out of range fails (exit 2)', async () => {
    const disabled = await cliOn(namespace, 'disable-item', 'steady', '2');
    expect(disabled).toMatchObject({
      code: 0,
      stdout: "Disabled item 2 of job 'steady': it runs nowhere until enabled.\n",
    });
    expect(await zk.exists('/steady/sharding/2/disabled')).toBeDefined();
    const sharding = await cliOn(namespace, 'sharding', 'steady');
    expect(tableRows(sharding.stdout)[3]).toEqual(['2', 'DISABLED', expect.any(String), expect.any(String), 'no']);

    const enabled = await cliOn(namespace, 'enable-item', 'steady', '2', '--json');
    expect(enabled).toMatchObject({ code: 0, stdout: 'null\n' });
    expect(await zk.exists('/steady/sharding/2/disabled')).toBeUndefined();

    const outOfRange = await cliOn(namespace, 'disable-item', 'steady', '4');
    expect(outOfRange.code).toBe(2);
    expect(outOfRange.stderr).toBe(
      "nestjs-elastic-job: disableItem: invalid 'item': must be an item of the job, 0..3 (shardingTotalCount 4), got 4\n",
    );
  });

  it('--watch redraws jobs (one JSON line per change) and sharding (a table per change) until Ctrl-C', async () => {
    const jobs = startCliOn(namespace, 'jobs', '--watch', '--json');
    hold(() => jobs.kill('SIGKILL'));
    const sharding = startCliOn(namespace, 'sharding', 'steady', '--watch');
    hold(() => sharding.kill('SIGKILL'));
    const first = await jobs.waitForLine(/"jobName":"steady"/, 15_000);
    expect(JSON.parse(first)).toEqual(await operator.getAllJobsBriefInfo());
    await sharding.waitForLine(/^ITEM +STATUS/, 15_000);

    await operator.updateJobConfiguration('steady', { description: 'watched' });
    await operator.disableItem('steady', 1);
    const changed = await jobs.waitForLine(/"description":"watched"/, 10_000);
    expect(JSON.parse(changed)).toContainEqual(expect.objectContaining({ jobName: 'steady', description: 'watched' }));
    await sharding.waitForLine(/^1 +DISABLED +10\.0\.9\.\d/, 10_000);
    await operator.enableItem('steady', 1);

    jobs.kill('SIGINT');
    sharding.kill('SIGINT');
    expect(await jobs.exited).toBe(0);
    expect(await sharding.exited).toBe(0);
  });

  it('shutdown <name> --ip IP: that instance stops the job, the other app goes on', async () => {
    const json = await cliOn(namespace, 'shutdown', 'steady', '--ip', IPS[1], '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([{ jobName: 'steady', serverIp: IPS[1], instanceId: instanceOf(IPS[1]) }]);
    await eventually(
      () => apps[1]!.get(ElasticJobRegistry).getJobStatus('steady').shutdown,
      (shutdown) => shutdown?.by === 'operator',
      10_000,
      'the app on that server to stop the job',
    );
    const again = await cliOn(namespace, 'shutdown', 'steady', '--ip', IPS[1]);
    expect(again.stdout).toBe(
      `Nothing to shut down for job 'steady' on server ${IPS[1]}: no online instance matches.\n`,
    );
  });

  it('remove <name> --ip IP: shutdown, and the server node deleted', async () => {
    const human = await cliOn(namespace, 'remove', 'on-demand', '--ip', IPS[1]);
    expect(human.code).toBe(0);
    expect(human.stdout).toBe(
      `Shut down 1 instance and removed 1 server node for job 'on-demand' on server ${IPS[1]}:\n` +
        `JOB        SERVER    INSTANCE\n` +
        `on-demand  ${IPS[1]}  ${instanceOf(IPS[1])}\n` +
        `on-demand  ${IPS[1]}  -\n`,
    );
    expect(await zk.exists(`/on-demand/servers/${IPS[1]}`)).toBeUndefined();
    expect(await zk.exists(`/on-demand/instances/${instanceOf(IPS[1])}`)).toBeUndefined();
    expect(await zk.exists('/on-demand/config')).toBeDefined(); // the job stays
  });

  it('remove-job <name>: the whole tree deleted', async () => {
    const removed = await cliOn(namespace, 'remove-job', 'on-demand');
    expect(removed).toMatchObject({ code: 0, stdout: "Removed job 'on-demand': its whole tree is deleted.\n" });
    expect(await zk.exists('/on-demand')).toBeUndefined();
    const jobs = await cliOn(namespace, 'jobs', '--json');
    expect((JSON.parse(jobs.stdout) as Array<{ jobName: string }>).map((job) => job.jobName)).toEqual(['steady']);
    const again = await cliOn(namespace, 'remove-job', 'on-demand');
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/No job named 'on-demand' in this namespace/);
  });
});
