import { Injectable } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { ElasticJobOperator, ElasticJobRegistry, ShardedJob, type ShardingContext } from '../../lib/index.js';
import type { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import { appOptions, bootApp } from '../support/app.js';
import { javaPeer } from '../support/java.js';
import { LineProcess } from '../support/line-process.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * ElasticJob's own lifecycle writes, made from Java with Curator as its registry center makes them
 * (test/java/ElasticJobLifecyclePeer.java), on a cluster of our apps: each is acted on as ours are, and our
 * operator API reports the result. Java tools and ours steer the same clusters.
 */

afterEach(async () => {
  await releaseAll();
});

const runs: Array<{ ip: string; job: string; item: number; start: number }> = [];

@Injectable()
class InteropJobs {
  @ShardedJob({ jobName: 'mixed', cron: '* * * * * *', shardingTotalCount: 4 })
  mixed(context: ShardingContext): void {
    runs.push({ ip: context.taskId.split('@-@').at(-2)!, job: 'mixed', item: context.shardingItem, start: Date.now() });
  }

  @ShardedJob({ jobName: 'manual', cron: '0 0 0 1 1 *', shardingTotalCount: 2 })
  manual(context: ShardingContext): void {
    runs.push({
      ip: context.taskId.split('@-@').at(-2)!,
      job: 'manual',
      item: context.shardingItem,
      start: Date.now(),
    });
  }
}

const IPS = ['10.6.0.1', '10.6.0.2'];

/**
 * Waits until every app's instance of `job` is online in ZooKeeper, where the Java trigger lists them
 * (InstanceService.triggerAllInstances writes `trigger/{id}` for the `instances/` children of that moment). A loaded
 * host can stall this process past the session timeout (seen: 10 s): both sessions expire, the instance nodes go
 * with them, and a trigger sent before the apps have re-registered on their new sessions reaches nobody, as Java
 * ElasticJob's would.
 */
async function everyInstanceOnline(zk: ZookeeperRegistryCenter, job: string): Promise<void> {
  const ids = JSON.stringify(IPS.map((ip) => `${ip}@-@${process.pid}`).sort());
  await eventually(
    // The observer's own session may be reconnecting after the same stall: ask again.
    () =>
      zk.getChildren(`/${job}/instances`).then(
        (online) => (online ?? []).sort(),
        () => [],
      ),
    (online) => JSON.stringify(online) === ids,
    20_000,
    `every app's instance of ${job} online`,
  );
}

/** Sends one command to the Java peer and returns its "OK ..." detail. */
async function java(peer: LineProcess, command: string): Promise<string> {
  const from = peer.lines.length;
  peer.send(command);
  const answer = await peer.waitForLine(/^(OK|ERROR)/, 20_000, from);
  if (answer.startsWith('ERROR')) throw new Error(`Java peer: ${answer}`);
  return answer.slice(3);
}

describe("ElasticJob's lifecycle writes from Java (Curator) on a cluster of ours", () => {
  it('trigger, disable/enable a server, disable an item, shutdown and remove: acted on, and reported by ours', async () => {
    const namespace = uniqueNamespace('lifecycle-java');
    runs.length = 0;
    const apps: TestingModule[] = [];
    for (const ip of IPS) {
      const app = await bootApp(appOptions(namespace, { instance: { ip } }), [InteropJobs]);
      hold(() => app.close());
      apps.push(app);
    }
    const operator = await ElasticJobOperator.connect({ serverLists: zkConnect(), namespace });
    hold(() => operator.close());
    const peer = new LineProcess('java', javaPeer('ElasticJobLifecyclePeer', [zkConnect(), namespace]));
    hold(() => peer.kill('SIGKILL'));
    await peer.waitForLine(/^READY$/, 60_000);
    await eventually(
      () => operator.getShardingInfo('mixed'),
      (items) => items.length === 4 && new Set(items.map((item) => item.instanceId)).size === 2,
      20_000,
      'the job sharded over both apps',
    );

    // Trigger: every instance runs its items of the never-firing job once.
    const zk = await observer(namespace);
    await everyInstanceOnline(zk, 'manual');
    expect((await java(peer, 'trigger manual')).split(',').sort()).toEqual(IPS.map((ip) => `${ip}@-@${process.pid}`));
    await eventually(
      () => runs.filter((run) => run.job === 'manual').map((run) => run.item),
      (items) => items.length === 2,
      15_000,
      'the triggered items',
    );

    // A server disabled from Java: ours reshard without it; our statistics say so.
    let at = Date.now();
    await java(peer, `disable mixed ${IPS[0]}`);
    expect(await operator.getJobsBriefInfo(IPS[0]!)).toMatchObject([
      { jobName: 'manual', status: 'OK' },
      { jobName: 'mixed', status: 'DISABLED' },
    ]);
    await eventually(
      () => runs.filter((run) => run.job === 'mixed' && run.start > at + 2100),
      (later) => new Set(later.map((run) => run.item)).size === 4,
      15_000,
      'a firing with every item on the enabled server',
    );
    expect(runs.filter((run) => run.job === 'mixed' && run.start > at + 2100 && run.ip === IPS[0])).toEqual([]);
    at = Date.now();
    await java(peer, `enable mixed ${IPS[0]}`);
    await eventually(
      () => runs.filter((run) => run.job === 'mixed' && run.start > at && run.ip === IPS[0]).length,
      (count) => count > 0,
      15_000,
      'the enabled server running items again',
    );

    // An item disabled from Java: it runs nowhere; ours report it DISABLED.
    await java(peer, 'disable-item mixed 1');
    at = Date.now();
    expect((await operator.getShardingInfo('mixed'))[1]).toMatchObject({ item: 1, status: 'DISABLED' });
    await eventually(
      () => runs.filter((run) => run.job === 'mixed' && run.start > at + 2100),
      (later) => new Set(later.map((run) => run.item)).size === 3 && later.some((run) => run.start > at + 3100),
      15_000,
      'two firings without the disabled item',
    );
    expect(runs.filter((run) => run.job === 'mixed' && run.item === 1 && run.start > at + 2100)).toEqual([]);
    await java(peer, 'enable-item mixed 1');

    // Shutdown of one server's instance from Java: that app stops the job; the other keeps it.
    expect(await java(peer, `shutdown mixed ${IPS[1]}`)).toBe(`${IPS[1]}@-@${process.pid}`);
    await eventually(
      () => apps[1]!.get(ElasticJobRegistry).getJobStatus('mixed').shutdown?.by,
      (by) => by === 'operator',
      10_000,
      'the app on that server to stop the job',
    );
    expect(apps[0]!.get(ElasticJobRegistry).getJobStatus('mixed').registered).toBe(true);

    // The whole job removed from Java: both apps stop it; nothing of it comes back.
    await java(peer, 'remove-job mixed');
    await eventually(
      () => apps[0]!.get(ElasticJobRegistry).getJobStatus('mixed').shutdown?.reason ?? '',
      (reason) => reason.includes('removed from ZooKeeper'),
      10_000,
      'the other app to stop the removed job',
    );
    await everyInstanceOnline(zk, 'manual');
    const triggered = await java(peer, 'trigger manual'); // the cluster lives on
    expect(triggered.split(',').sort()).toEqual(IPS.map((ip) => `${ip}@-@${process.pid}`));
    await eventually(
      () => runs.filter((run) => run.job === 'manual').length,
      (count) => count === 4,
      15_000,
      'the other job triggered again',
    ).catch(async (error: unknown) => {
      // What was written, and what is left, if the trigger reached both apps and still did not run.
      const left = (await zk.getChildren('/manual/trigger')) ?? [];
      const sharding = await operator.getShardingInfo('manual');
      throw new Error(
        `${String(error)}; the peer triggered [${triggered}], trigger nodes left [${left.join(', ')}], ` +
          `manual's runs ${JSON.stringify(runs.filter((run) => run.job === 'manual'))}, ` +
          `sharding ${JSON.stringify(sharding)}, statuses ${JSON.stringify(apps.map((app) => app.get(ElasticJobRegistry).getJobStatus('manual')))}`,
      );
    });
    expect((await operator.getAllJobsBriefInfo()).map((job) => job.jobName)).toEqual(['manual']);
    // Curator deletes children one by one (maybe `instances` before `config`): nothing of the job was put back.
    expect(await zk.exists('/mixed')).toBeUndefined();
  });

  it("lists the same jobs with workflows as without: the workflows' node has no config", async () => {
    const namespace = uniqueNamespace('lifecycle-java-workflow');
    const peer = new LineProcess('java', javaPeer('ElasticJobLifecyclePeer', [zkConnect(), namespace]));
    hold(() => peer.kill('SIGKILL'));
    await peer.waitForLine(/^READY$/, 60_000);
    const plain = await bootApp(appOptions(namespace, { instance: { ip: IPS[0]! } }), [WorkflowJobs]);
    const before = await java(peer, 'list-jobs');
    expect(before).toBe('load,report|2');
    await plain.close();
    const app = await bootApp(
      appOptions(namespace, {
        instance: { ip: IPS[0]! },
        workflows: [{ name: 'nightly', steps: { load: [], report: ['load'] } }],
      }),
      [WorkflowJobs],
    );
    hold(() => app.close());
    const operator = app.get(ElasticJobOperator);
    const runId = await operator.triggerWorkflow('nightly');
    await eventually(
      async () => (await operator.getWorkflowRuns('nightly'))[0]?.state,
      (state) => state === 'COMPLETED',
      20_000,
      `run ${runId} to complete`,
    );
    // getAllJobsBriefInfo's list is the same; only getJobsTotalCount, a count of the namespace's children, has one more.
    expect(await java(peer, 'list-jobs')).toBe('load,report|3');
    expect((await operator.getAllJobsBriefInfo()).map((job) => job.jobName)).toEqual(['load', 'report']);
  });
});

@Injectable()
class WorkflowJobs {
  @ShardedJob({ jobName: 'load', oneOff: true, shardingTotalCount: 2 })
  load(): void {}

  @ShardedJob({ jobName: 'report', oneOff: true, shardingTotalCount: 1 })
  report(): void {}
}
