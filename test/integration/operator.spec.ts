import { Injectable } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ElasticJobOperator,
  ElasticJobRegistry,
  InvalidOperationError,
  JobConfigurationError,
  JobNotFoundError,
  ShardedJob,
  type ShardingContext,
} from '../../lib/index.js';
import { ElasticJobOrchestrator } from '../../lib/elastic-job.orchestrator.js';
import { fourLetterWord } from '../../lib/devtools/local-zookeeper.js';
import { appOptions, bootApp } from '../support/app.js';
import { appRegistryCenter } from '../support/jobs.js';
import { hold, observer, proxyTo, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * The operator API against a running cluster: three apps in this process, told apart by `instance.ip`, and an
 * ElasticJobOperator with its own session, as an operator's tool has. Each operation: the znode ElasticJob's
 * lifecycle API writes, and the running instances' reaction.
 */

afterEach(async () => {
  await releaseAll();
});

interface Run {
  ip: string;
  job: string;
  item: number;
  start: number;
  end: number;
}
const runs: Run[] = [];

/** The instance's IP, from the task id `{job}@-@{items}@-@READY@-@{ip}@-@{pid}`. */
function ipOf(taskId: string): string {
  return taskId.split('@-@').at(-2)!;
}

function record(context: ShardingContext, start: number): void {
  runs.push({ ip: ipOf(context.taskId), job: context.jobName, item: context.shardingItem, start, end: Date.now() });
}

@Injectable()
class OperatedJobs {
  @ShardedJob({ jobName: 'steady', cron: '* * * * * *', shardingTotalCount: 6, description: 'every second' })
  async steady(context: ShardingContext): Promise<void> {
    const start = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 50));
    record(context, start);
  }

  @ShardedJob({ jobName: 'on-demand', cron: '0 0 0 1 1 *', shardingTotalCount: 3 })
  onDemand(context: ShardingContext): void {
    record(context, Date.now());
  }
}

/** Only in the rerun test's cluster (the others count the jobs). Two items an instance: a rerun of one must not run the other. */
@Injectable()
class RerunJobs {
  @ShardedJob({ jobName: 'rerun-me', cron: '0 0 0 1 1 *', shardingTotalCount: 6 })
  rerunMe(context: ShardingContext): void {
    record(context, Date.now());
  }
}

const IPS = ['10.0.7.1', '10.0.7.2', '10.0.7.3'];

interface Cluster {
  namespace: string;
  apps: TestingModule[];
  operator: ElasticJobOperator;
}

async function cluster(extra: Array<typeof RerunJobs> = []): Promise<Cluster> {
  const namespace = uniqueNamespace('operator-api');
  runs.length = 0;
  const apps: TestingModule[] = [];
  for (const ip of IPS) {
    const app = await bootApp(appOptions(namespace, { instance: { ip } }), [OperatedJobs, ...extra]);
    hold(() => app.close());
    apps.push(app);
  }
  const operator = await ElasticJobOperator.connect({ serverLists: zkConnect(), namespace });
  hold(() => operator.close());
  // Sharded: every item of the steady job has an owner online.
  await eventually(
    () => operator.getShardingInfo('steady'),
    // Every app owns items: not a sharding from before the last app joined (resharding waits for a firing).
    (items) => items.length === 6 && new Set(items.map((item) => item.instanceId)).size === 3,
    20_000,
    'the steady job sharded over the three apps',
  );
  return { namespace, apps, operator };
}

/**
 * Resolves once runs started after `since` show `check`, over at least three firings. Assertions then look at
 * runs from 2.1 s after a write on: a firing prepared before the instances heard of the write may still run as
 * before, and a loaded machine may hear late.
 */
async function runsAfter(since: number, check: (later: Run[]) => boolean, what: string): Promise<Run[]> {
  return eventually(
    () => runs.filter((run) => run.job === 'steady' && run.start > since),
    (later) => later.some((run) => run.start > since + 3000) && check(later),
    20_000,
    what,
  );
}

describe('ElasticJobOperator on a running cluster', () => {
  it('reports jobs, servers and sharding with ElasticJob fields and status rules', async () => {
    const { namespace, operator } = await cluster();
    // The leader sharded 'on-demand' once registered (issue 43), never fired. For the status rule, one of its items
    // is given to an instance that is gone, as a crash before any resharding leaves it (ElasticJob's
    // JobStatisticsAPIImpl.isHasShardingFlag: an owner not online, or nothing assigned).
    const zk = await observer(namespace);
    await eventually(
      () => zk.exists('/on-demand/sharding/0/instance'),
      (stat) => stat !== undefined,
      15_000,
      'the sharding at start-up',
    );
    await zk.setData('/on-demand/sharding/0/instance', Buffer.from('10.9.9.8@-@1'));
    expect(await operator.getAllJobsBriefInfo()).toEqual([
      {
        jobName: 'on-demand',
        status: 'SHARDING_FLAG', // an item whose owner is gone, as ElasticJob reports it
        description: '',
        cron: '0 0 0 1 1 *',
        instanceCount: 3,
        shardingTotalCount: 3,
      },
      {
        jobName: 'steady',
        status: 'OK',
        description: 'every second',
        cron: '* * * * * *',
        instanceCount: 3,
        shardingTotalCount: 6,
      },
    ]);
    const servers = await operator.getAllServersBriefInfo();
    expect(servers.map((server) => server.serverIp)).toEqual(IPS);
    for (const server of servers) {
      expect(server).toMatchObject({ instancesNum: 1, jobsNum: 2, disabledJobsNum: 0 });
      expect(server.jobNames).toEqual(['on-demand', 'steady']);
      expect(server.instances).toEqual([`${server.serverIp}@-@${process.pid}`]);
    }
    const sharding = await operator.getShardingInfo('steady');
    expect(sharding.map((item) => item.item)).toEqual([0, 1, 2, 3, 4, 5]);
    for (const item of sharding) {
      expect(['PENDING', 'RUNNING']).toContain(item.status);
      expect(item.failover).toBe(false);
      expect(item.instanceId).toBe(`${item.serverIp}@-@${process.pid}`);
    }
    // Average allocation: two items per server.
    for (const ip of IPS) expect(sharding.filter((item) => item.serverIp === ip)).toHaveLength(2);
    expect(await operator.getJobsBriefInfo(IPS[0]!)).toMatchObject([
      { jobName: 'on-demand', status: 'OK', instanceCount: 1 },
      { jobName: 'steady', status: 'OK', instanceCount: 1 },
    ]);
    expect(await operator.getJobBriefInfo('no-such-job')).toBeUndefined();
    // No such job is not a job with no items yet.
    await expect(operator.getShardingInfo('no-such-job')).rejects.toThrow(JobNotFoundError);
    // A name that is not one node name never reaches ZooKeeper (nothing outside a job's subtree is touched).
    await expect(operator.getJobBriefInfo('steady/config')).rejects.toThrow(InvalidOperationError);
    await expect(operator.getShardingInfo('..')).rejects.toThrow(InvalidOperationError);
    await expect(operator.disable({ serverIp: '..' })).rejects.toThrow(InvalidOperationError);
    await expect(operator.disable({ jobName: 'a b', serverIp: IPS[0] })).rejects.toThrow(/invalid 'jobName'/);
  });

  it('disables one item everywhere (sharding/{item}/disabled) and enables it again', async () => {
    const { namespace, operator } = await cluster();
    const zk = await observer(namespace);
    const disabledAt = Date.now();
    await operator.disableItem('steady', 2);
    expect(await zk.exists('/steady/sharding/2/disabled')).toBeDefined();
    expect((await operator.getShardingInfo('steady'))[2]).toMatchObject({ item: 2, status: 'DISABLED' });
    // A firing prepared before the write may still run it; none after.
    const later = await runsAfter(
      disabledAt,
      (after) =>
        [0, 1, 3, 4, 5].every((item) => after.some((run) => run.item === item && run.start > disabledAt + 2100)),
      'two firings after the item was disabled',
    );
    expect(later.filter((run) => run.item === 2 && run.start > disabledAt + 2100)).toEqual([]);
    const enabledAt = Date.now();
    await operator.enableItem('steady', 2);
    expect(await zk.exists('/steady/sharding/2/disabled')).toBeUndefined();
    await runsAfter(enabledAt, (after) => after.some((run) => run.item === 2), 'item 2 running again');
    await expect(operator.disableItem('steady', 6)).rejects.toThrow(InvalidOperationError);
    await expect(operator.disableItem('steady', 6)).rejects.toThrow(/0\.\.5 \(shardingTotalCount 6\)/);
    // A flag left beyond a shrunk count can still be taken away.
    await zk.ensurePath('/steady/sharding/9/disabled');
    await operator.enableItem('steady', 9);
    expect(await zk.exists('/steady/sharding/9/disabled')).toBeUndefined();
  });

  it('disables a job on one server (servers/{ip} = DISABLED): the others take its items; enabled, it takes some back', async () => {
    const { namespace, operator } = await cluster();
    const zk = await observer(namespace);
    const [ip] = IPS as [string];
    const disabledAt = Date.now();
    expect(await operator.disable({ jobName: 'steady', serverIp: ip })).toEqual([{ jobName: 'steady', serverIp: ip }]);
    expect((await zk.getData(`/steady/servers/${ip}`))?.data.toString()).toBe('DISABLED');
    const later = await runsAfter(
      disabledAt,
      (after) => {
        const lastOnIp = Math.max(0, ...after.filter((run) => run.ip === ip).map((run) => run.start));
        // Every item ran elsewhere in one firing after the last run on the disabled server.
        const elsewhere = after.filter((run) => run.ip !== ip && run.start > lastOnIp + 500);
        return new Set(elsewhere.map((run) => run.item)).size === 6;
      },
      'every item running on the other two servers',
    );
    const lastEnd = Math.max(disabledAt, ...later.filter((run) => run.ip === ip).map((run) => run.end));
    process.stdout.write(
      `operator disable: last item on that server ended ${lastEnd - disabledAt} ms after the write\n`,
    );
    expect(await operator.getJobsBriefInfo(ip)).toMatchObject([
      { jobName: 'on-demand', status: 'OK' },
      { jobName: 'steady', status: 'DISABLED' },
    ]);
    expect((await operator.getAllServersBriefInfo())[0]).toMatchObject({ serverIp: ip, disabledJobsNum: 1 });
    const enabledAt = Date.now();
    await operator.enable({ jobName: 'steady', serverIp: ip });
    expect((await zk.getData(`/steady/servers/${ip}`))?.data.toString()).toBe('ENABLED');
    await runsAfter(enabledAt, (after) => after.some((run) => run.ip === ip), 'the server running items again');
    // A server in every job: each of its server nodes written.
    expect(await operator.disable({ serverIp: IPS[1] })).toEqual([
      { jobName: 'on-demand', serverIp: IPS[1] },
      { jobName: 'steady', serverIp: IPS[1] },
    ]);
    await expect(operator.disable({})).rejects.toThrow(InvalidOperationError);
  });

  it('reruns one item on its owner (rerun/{instanceId}): only that item runs, once; refused when it cannot', async () => {
    const { namespace, operator } = await cluster([RerunJobs]);
    const zk = await observer(namespace);
    const reruns = () => runs.filter((run) => run.job === 'rerun-me');
    // Sharded by the leader once registered (issue 43); item 1 then given to an instance that is gone, as a crash
    // before any resharding leaves it.
    await eventually(
      () => zk.exists('/rerun-me/sharding/1/instance'),
      (stat) => stat !== undefined,
      15_000,
      'the sharding at start-up',
    );
    await zk.setData('/rerun-me/sharding/1/instance', Buffer.from('10.9.9.8@-@1'));
    await expect(operator.rerunItem('rerun-me', 1)).rejects.toThrow(/has no live owner now/);
    await operator.trigger('rerun-me'); // the leader reshards it at this firing (an item without a live owner)
    await eventually(reruns, (list) => list.length === 6, 15_000, 'the first firing');
    const owner = (await zk.getData('/rerun-me/sharding/1/instance'))!.data.toString();
    // A rerun left for an instance that is gone is removed (a restart with that id would run it much later).
    await zk.ensurePath('/rerun-me/rerun/10.9.9.9@-@1');
    expect(await operator.rerunItem('rerun-me', 1)).toEqual({ jobName: 'rerun-me', item: 1, instanceId: owner });
    const again = await eventually(reruns, (list) => list.length === 7, 15_000, 'the rerun');
    expect(await zk.exists('/rerun-me/rerun/10.9.9.9@-@1')).toBeUndefined();
    expect(again[6]).toMatchObject({ item: 1, ip: owner.split('@-@')[0] });
    await eventually(
      () => zk.exists(`/rerun-me/rerun/${owner}`),
      (stat) => stat === undefined,
      5_000,
      'the rerun node consumed by its owner',
    );
    // What the node must hold: anything else is deleted with a warning, and runs nothing.
    await zk.create(`/rerun-me/rerun/${owner}`, Buffer.from('all'));
    await eventually(
      () => zk.exists(`/rerun-me/rerun/${owner}`),
      (stat) => stat === undefined,
      5_000,
      'the garbage rerun node deleted',
    );
    await operator.disableItem('rerun-me', 2);
    await expect(operator.rerunItem('rerun-me', 2)).rejects.toThrow(/item 2 of 'rerun-me' is disabled/);
    await expect(operator.rerunItem('rerun-me', 6)).rejects.toThrow(InvalidOperationError);
    await expect(operator.rerunItem('no-such-job', 0)).rejects.toThrow(JobNotFoundError);
    await expect(operator.rerunItem('rerun-me', -1)).rejects.toThrow(InvalidOperationError);
    expect(reruns()).toHaveLength(7); // not the owner's other item, nor the garbage nor the refusals ran anything
  });

  it('triggers a job on every online instance (trigger/{instanceId}): each runs its items once', async () => {
    const { namespace, operator, apps } = await cluster();
    const zk = await observer(namespace);
    await zk.ensurePath('/on-demand/trigger/10.7.7.7@-@1'); // left for an instance long gone
    const instances = await operator.trigger('on-demand');
    // As ElasticJob: the directory emptied first, so a restarted instance with that id is not fired by it.
    expect(await zk.exists('/on-demand/trigger/10.7.7.7@-@1')).toBeUndefined();
    expect(instances).toEqual(IPS.map((ip) => `${ip}@-@${process.pid}`));
    const fired = await eventually(
      () => runs.filter((run) => run.job === 'on-demand'),
      (onDemand) => onDemand.length === 3,
      15_000,
      'the triggered job to run its three items',
    );
    expect(fired.map((run) => run.item).sort()).toEqual([0, 1, 2]);
    await expect(operator.trigger('no-such-job')).rejects.toThrow(JobNotFoundError);
    // The message names no other job (it may reach a remote caller).
    await expect(operator.trigger('no-such-job')).rejects.toThrow(
      "No job named 'no-such-job' in this namespace (it has no config node): check the name and the namespace; the " +
        'jobs query lists the jobs there',
    );

    // The app's own trigger is the same one: the stale node goes there too, and each instance runs once more.
    await zk.ensurePath('/on-demand/trigger/10.7.7.7@-@1');
    expect(await apps[0]!.get(ElasticJobRegistry).trigger('on-demand')).toBe(3);
    expect(await zk.exists('/on-demand/trigger/10.7.7.7@-@1')).toBeUndefined();
    await eventually(
      () => runs.filter((run) => run.job === 'on-demand').length,
      (count) => count === 6,
      15_000,
      'the app-triggered job to run its three items again',
    );
  });

  it('reads the configuration from ZooKeeper and updates it validated: the cluster reshards to the new count', async () => {
    const { namespace, operator } = await cluster();
    const zk = await observer(namespace);
    expect(await operator.getJobConfiguration('steady')).toMatchObject({
      jobName: 'steady',
      cron: '* * * * * *',
      shardingTotalCount: 6,
      description: 'every second',
      jobShardingStrategyType: 'AVG_ALLOCATION',
    });
    const before = (await zk.exists('/steady/config'))!.version;
    // Refused before anything is written, with the job and the field named.
    await expect(operator.updateJobConfiguration('steady', { cron: 'every minute' })).rejects.toThrow(
      JobConfigurationError,
    );
    await expect(operator.updateJobConfiguration('steady', { cron: 'every minute' })).rejects.toThrow(
      /Job 'steady': invalid 'cron'/,
    );
    await expect(
      operator.updateJobConfiguration('steady', { jobName: 'other' } as unknown as { description: string }),
    ).rejects.toThrow(InvalidOperationError);
    expect((await zk.exists('/steady/config'))!.version).toBe(before);

    // Keys a Java job keeps there, which this library does not model: an update must leave them as they are.
    const javaKeys =
      'jobExtraConfigurations:\n' +
      '- !!org.apache.shardingsphere.elasticjob.kernel.tracing.yaml.YamlTracingConfiguration\n' +
      '  type: RDB\n' +
      'jobListenerTypes:\n- simpleListener\n' +
      'props:\n  script.command.line: echo hello\n';
    const stored = (await zk.getData('/steady/config'))!.data.toString();
    await zk.setData('/steady/config', Buffer.from(stored + javaKeys));
    const updatedAt = Date.now();
    const updated = await operator.updateJobConfiguration('steady', { shardingTotalCount: 3, description: 'fewer' });
    const written = (await zk.getData('/steady/config'))!.data.toString();
    expect(written).toContain('!!org.apache.shardingsphere.elasticjob.kernel.tracing.yaml.YamlTracingConfiguration');
    expect(written).toContain('script.command.line: echo hello');
    expect(written).toContain('- simpleListener');
    expect(written).toContain('shardingTotalCount: 3');
    expect(updated).toMatchObject({ shardingTotalCount: 3, description: 'fewer', cron: '* * * * * *' });
    expect(await operator.getJobConfiguration('steady')).toEqual(updated);
    const later = await runsAfter(
      updatedAt,
      (after) => after.some((run) => run.start > updatedAt + 2100),
      'firings after the update',
    );
    expect(new Set(later.filter((run) => run.start > updatedAt + 2100).map((run) => run.item))).toEqual(
      new Set([0, 1, 2]),
    );
  });

  it('shuts a job down on one server (instances/{id} deleted): that app stops it, the others take its items', async () => {
    const { apps, operator } = await cluster();
    const ip = IPS[2]!;
    const shutAt = Date.now();
    expect(await operator.shutdown({ jobName: 'steady', serverIp: ip })).toEqual([
      { jobName: 'steady', serverIp: ip, instanceId: `${ip}@-@${process.pid}` },
    ]);
    await eventually(
      () => apps[2]!.get(ElasticJobRegistry).getJobStatus('steady').shutdown,
      (shutdown) => shutdown?.by === 'operator',
      10_000,
      'the app on that server to stop the job',
    );
    expect(apps[2]!.get(ElasticJobRegistry).getJobStatus('on-demand').registered).toBe(true); // its other job goes on
    const later = await runsAfter(
      shutAt,
      (after) => new Set(after.filter((run) => run.start > shutAt + 3000).map((run) => run.item)).size === 6,
      'every item running on the two others',
    );
    expect(later.filter((run) => run.ip === ip && run.start > shutAt + 2100)).toEqual([]);
    expect(await operator.getJobBriefInfo('steady')).toMatchObject({ instanceCount: 2 });

    // The job removed afterwards (as Curator's child-by-child removal may take our instance node first): the
    // stopped app tells its stop as the removal it turned out to be.
    expect(apps[2]!.get(ElasticJobRegistry).getJobStatus('steady').shutdown?.reason).toContain('was deleted');
    await operator.removeJob('steady');
    await eventually(
      () => apps[2]!.get(ElasticJobRegistry).getJobStatus('steady').shutdown,
      (shutdown) => shutdown?.by === 'operator' && shutdown.reason.includes('removed from ZooKeeper'),
      10_000,
      'the stopped app to tell the removal',
    );
  });

  it('removes a job (its whole tree): every app stops it and writes nothing back; their other jobs go on', async () => {
    const { namespace, apps, operator } = await cluster();
    const zk = await observer(namespace);
    await operator.removeJob('steady');
    for (const app of apps) {
      await eventually(
        () => app.get(ElasticJobRegistry).getJobStatus('steady').shutdown,
        (shutdown) => shutdown?.by === 'operator' && shutdown.reason.includes('removed from ZooKeeper'),
        10_000,
        'every app to stop the removed job',
      );
    }
    // The cluster is alive (its other job runs when triggered), and nobody put anything of the removed job back.
    await operator.trigger('on-demand');
    await eventually(
      () => runs.filter((run) => run.job === 'on-demand').length,
      (count) => count === 3,
      15_000,
      'the other job to run',
    );
    expect(await zk.exists('/steady')).toBeUndefined();
    // Nothing started after each app said it had stopped the job.
    const stoppedAt = Math.max(
      ...apps.map((app) => app.get(ElasticJobRegistry).getJobStatus('steady').shutdown!.at.getTime()),
    );
    expect(runs.filter((run) => run.job === 'steady' && run.start > stoppedAt)).toEqual([]);
    expect((await operator.getAllJobsBriefInfo()).map((job) => job.jobName)).toEqual(['on-demand']);
    await expect(operator.removeJob('steady')).rejects.toThrow(JobNotFoundError);
  });

  it("is injectable: on the jobs' session in an app with jobs, on a session of its own (closed with it) without", async () => {
    const { namespace, apps } = await cluster();
    const withJobs = apps[0]!.get(ElasticJobOperator);
    const reads = appRegistryCenter(apps[0]!).stats.reads;
    expect((await withJobs.getAllJobsBriefInfo()).map((job) => job.jobName)).toEqual(['on-demand', 'steady']);
    expect(appRegistryCenter(apps[0]!).stats.reads).toBeGreaterThan(reads); // the app's own session read them
    await withJobs.close(); // not its session to close
    expect(appRegistryCenter(apps[0]!).isConnected()).toBe(true);

    const admin = await bootApp(appOptions(namespace), []); // an operations app, no job of its own
    hold(() => admin.close());
    const operator = admin.get(ElasticJobOperator);
    expect((await operator.getJobBriefInfo('steady'))?.instanceCount).toBe(3);
    const session = (await admin.get(ElasticJobOrchestrator).operatorRegistry()).getSessionId()!;
    const [host, port] = zkConnect().split(',')[0]!.split(':') as [string, string];
    const hasSession = async (): Promise<boolean> =>
      (await fourLetterWord(host, Number(port), 'cons')).includes(`sid=0x${BigInt(`0x${session}`).toString(16)}`);
    expect(await hasSession()).toBe(true);
    await admin.close();
    await eventually(hasSession, (open) => !open, 5000, "the operator's session closed with the app");
    await expect(operator.getJobBriefInfo('steady')).rejects.toMatchObject({ code: 'CLOSED' });
  });

  it('rejects within the connection timeout when the app has lost ZooKeeper, instead of waiting for it', async () => {
    const namespace = uniqueNamespace('operator-down');
    const proxy = await proxyTo();
    const app = await bootApp(
      appOptions(namespace, {
        zookeeper: { serverLists: proxy.connectString, namespace, connectionTimeoutMilliseconds: 1000 },
      }),
      [OperatedJobs],
    );
    hold(() => app.close());
    const operator = app.get(ElasticJobOperator);
    // Every call is bounded by the 1 s connection timeout, and on a loaded host a connected read of all the jobs
    // may take longer: what these reads show is that the operator answers when connected, so they are retried.
    const jobsWhenConnected = (): Promise<number> =>
      eventually(
        () =>
          operator.getAllJobsBriefInfo().then(
            (jobs) => jobs.length,
            () => -1,
          ),
        (count) => count >= 0,
        30_000,
        'an answer while connected',
      );
    expect(await jobsWhenConnected()).toBe(2);
    proxy.cut();
    await eventually(
      () => appRegistryCenter(app).isConnected(),
      (connected) => !connected,
      10_000,
      'the app disconnected',
    );
    await expect(operator.getAllJobsBriefInfo()).rejects.toMatchObject({ code: 'CONNECTION_LOSS' });
    proxy.restore();
    // The client retries after a random pause of up to baseSleepTimeMilliseconds (node-zookeeper-client's spinDelay,
    // as ZooKeeper's ClientCnxn): back in more than the 1 s bound now and then, so wait for the reconnection itself.
    expect(await appRegistryCenter(app).waitForConnection(20_000)).toBe(true);
    expect(await jobsWhenConnected()).toBe(2);
  });
});
