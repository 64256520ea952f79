import { afterEach, describe, expect, it } from 'vitest';
import { ElasticJobOperator } from '../../lib/index.js';
import { ClusterInstance, waitForRuns } from '../support/cluster.js';
import { eventually, startRegistry, uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * The operator API on a cluster of real processes, each registered under its own server IP (as on three machines):
 * what a statistics call sees of them, and how the processes react to a server disabled and the job removed.
 */

const IPS = ['10.8.0.1', '10.8.0.2', '10.8.0.3'];
const instances: ClusterInstance[] = [];
const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const instance of instances.splice(0)) instance.kill('SIGKILL');
  for (const close of closers.splice(0)) await close();
});

describe('ElasticJobOperator on three processes', () => {
  it('sees one server per process, disables one (it runs nothing more), and removes the job from all of them', async () => {
    const namespace = uniqueNamespace('operated-cluster');
    const cluster = IPS.map(
      (ip) => new ClusterInstance({ zkConnect: zkConnect(), namespace, total: 6, workMs: 50, ip }),
    );
    instances.push(...cluster);
    await Promise.all(cluster.map((instance) => instance.waitForLine(/^READY$/, 60_000)));
    const operator = await ElasticJobOperator.connect({ serverLists: zkConnect(), namespace });
    closers.push(() => operator.close());

    const sharded = await eventually(
      () => operator.getShardingInfo('cluster-job'),
      // Read item by item: a resharding landing between two reads can show three owners for a moment; wait for
      // the assignment itself (two items each), not a mix of two.
      (items) =>
        items.length === 6 &&
        IPS.every((ip, i) => items.filter((item) => item.instanceId === `${ip}@-@${cluster[i]!.pid}`).length === 2),
      30_000,
      'the job sharded over the three processes',
    );
    for (const [i, ip] of IPS.entries()) {
      expect(sharded.filter((item) => item.instanceId === `${ip}@-@${cluster[i]!.pid}`)).toHaveLength(2);
    }
    const servers = await operator.getAllServersBriefInfo();
    expect(servers.map(({ serverIp, instances: ids, jobsNum }) => ({ serverIp, ids, jobsNum }))).toEqual(
      IPS.map((ip, i) => ({ serverIp: ip, ids: [`${ip}@-@${cluster[i]!.pid}`], jobsNum: 1 })),
    );
    expect(await operator.getJobBriefInfo('cluster-job')).toMatchObject({ status: 'OK', instanceCount: 3 });

    // One server disabled: from the next firing on, every item runs on the other two.
    const [first, ...others] = cluster as [ClusterInstance, ...ClusterInstance[]];
    const disabledAt = Date.now();
    await operator.disable({ jobName: 'cluster-job', serverIp: IPS[0] });
    await waitForRuns(
      cluster,
      () =>
        new Set(
          others
            .flatMap((i) => i.runs())
            .filter((run) => run.start > disabledAt + 2100)
            .map((r) => r.item),
        ).size === 6,
      20_000,
      'every item on the two enabled servers',
    );
    expect(first.runs().filter((run) => run.start > disabledAt + 2100)).toEqual([]);

    // The job removed: every process stops it (and lives on), nothing of it is written back.
    await operator.removeJob('cluster-job');
    await Promise.all(cluster.map((instance) => instance.waitForLine(/removed from ZooKeeper/, 15_000)));
    expect(await operator.getAllJobsBriefInfo()).toEqual([]);
    const zk = await startRegistry({ namespace });
    closers.push(() => zk.close());
    expect(await zk.exists('/cluster-job')).toBeUndefined();
  });
});
