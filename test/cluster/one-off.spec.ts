import { afterEach, describe, expect, it } from 'vitest';
import { ElasticJobOperator } from '../../lib/index.js';
import { ClusterInstance, waitForRuns } from '../support/cluster.js';
import { uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * A one-off job (ElasticJob's OneOffJobBootstrap) on three real processes: each trigger runs exactly the job's items
 * once across them, with that trigger's job parameter, and nothing runs between triggers.
 */

const IPS = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
const instances: ClusterInstance[] = [];
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const instance of instances.splice(0)) instance.kill('SIGKILL');
  while (closers.length) await closers.pop()?.();
});

describe('one-off job on three processes', () => {
  it('runs exactly its items once per trigger, with the trigger parameter, sharded over all three', async () => {
    const namespace = uniqueNamespace('one-off-cluster');
    const cluster = IPS.map(
      (ip) => new ClusterInstance({ zkConnect: zkConnect(), namespace, total: 6, workMs: 30, ip, type: 'one-off' }),
    );
    instances.push(...cluster);
    await Promise.all(cluster.map((instance) => instance.waitForLine(/^READY$/, 60_000)));
    const operator = await ElasticJobOperator.connect({ serverLists: zkConnect(), namespace });
    closers.push(() => operator.close());
    const runs = () => cluster.flatMap((instance) => instance.runs().map((run) => ({ ...run, pid: instance.pid })));
    const runsOf = (parameter: string) => runs().filter((run) => run.jobParameter === parameter);

    // Registered, and nothing ran: no cron fires it.
    expect(runs()).toEqual([]);
    const parameters = ['first', 'second', 'third'];
    for (const parameter of parameters) {
      expect(await operator.trigger('cluster-job', { jobParameter: parameter })).toHaveLength(3);
      await waitForRuns(
        cluster,
        () => runsOf(parameter).length >= 6,
        30_000,
        `the six items of trigger '${parameter}'`,
      );
    }
    // A last trigger with the job's own parameter, as a fence: anything an earlier trigger ran twice would be in by now.
    await operator.trigger('cluster-job');
    await waitForRuns(cluster, () => runsOf('own').length >= 6, 30_000, 'the six items of the last trigger');

    for (const parameter of [...parameters, 'own']) {
      expect(
        runsOf(parameter)
          .map((run) => run.item)
          .sort(),
        parameter,
      ).toEqual([0, 1, 2, 3, 4, 5]);
    }
    expect(runs()).toHaveLength(24); // nothing else ran
    // Every trigger's items were spread over the three processes, two each (one sharding, at the first trigger).
    for (const parameter of parameters) {
      const perProcess = cluster.map((instance) => runsOf(parameter).filter((run) => run.pid === instance.pid).length);
      expect(perProcess, parameter).toEqual([2, 2, 2]);
    }
  });
});
