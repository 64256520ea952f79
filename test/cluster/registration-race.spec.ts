import { afterEach, describe, expect, it } from 'vitest';
import { CHILD_NODE_FLAGS, LineProcess } from '../support/line-process.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { uniqueNamespace, zkConnect } from '../support/zk.js';
import type { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';

/**
 * Issue 43, "ready sooner": many jobs' registration writes share multi requests (the TransactionCoalescer), and a
 * sharding that fits in one request is written atomically without the `processing` node. The tree stays ElasticJob's,
 * and peers racing for the same new jobs (NODE_EXISTS inside a combined multi) still end up registered and sharded.
 */

afterEach(async () => {
  await releaseAll();
});

interface Sharded {
  instanceId: string;
  reads: number;
  writes: number;
  watchRequests: number;
  watchEvents: number;
}

function manyJobs(namespace: string, jobs: number, cron?: string, total = 2): LineProcess {
  const app = new LineProcess(process.execPath, [...CHILD_NODE_FLAGS, 'build/test/fixtures/many-jobs-app.js'], {
    ...process.env,
    ZK_CONNECT: zkConnect(),
    ZK_NAMESPACE: namespace,
    JOBS: String(jobs),
    JOB_TOTAL: String(total),
    ...(cron ? { JOB_CRON: cron } : {}),
  });
  hold(async () => {
    app.child.kill('SIGTERM');
    await app.exited;
  });
  return app;
}

async function sharded(app: LineProcess): Promise<Sharded> {
  const line = await app.waitForLine(/"event":"sharded"/, 120_000);
  return JSON.parse(line.slice(4)) as Sharded;
}

/** A job's tree as ElasticJob 3.0.5 leaves it once registered and sharded (docs/reference/elasticjob.md). */
async function expectRegisteredTree(zk: ZookeeperRegistryCenter, job: string, instanceIds: string[]): Promise<void> {
  const children = async (path: string): Promise<string[]> => ((await zk.getChildren(path)) ?? []).sort();
  expect(await children(`/${job}`), job).toEqual(['config', 'instances', 'leader', 'servers', 'sharding', 'trigger']);
  expect(await children(`/${job}/instances`), job).toEqual([...instanceIds].sort());
  expect((await children(`/${job}/servers`)).length, job).toBe(1);
  expect(await children(`/${job}/sharding`), job).toEqual(['0', '1']);
  const leader = (await zk.getData(`/${job}/leader/election/instance`))?.data.toString();
  expect(instanceIds, job).toContain(leader);
  expect(await children(`/${job}/leader/sharding`), job).toEqual([]); // no flag, no processing node left
  const owners = await Promise.all(
    [0, 1].map(async (item) => (await zk.getData(`/${job}/sharding/${item}/instance`))?.data.toString()),
  );
  for (const owner of owners) expect(instanceIds, job).toContain(owner);
}

describe('registration of many jobs', () => {
  it('one process, 100 new jobs: their writes share a few multi requests, the tree is ElasticJob’s', async () => {
    const namespace = uniqueNamespace('many');
    const jobs = 100;
    const stats = await sharded(manyJobs(namespace, jobs));
    // Each job alone: its set-up, its announcement, the processing node and the sharding, 4 writes (400 here).
    expect(stats.writes).toBeLessThanOrEqual(jobs / 2);
    // A new job's tree is found missing in one read of its root (its data and its children: two before).
    expect(stats.reads).toBeLessThanOrEqual(jobs);
    const zk = await observer(namespace);
    for (let index = 0; index < jobs; index += 9) await expectRegisteredTree(zk, `many-${index}`, [stats.instanceId]);
  });

  it('two processes registering the same new jobs at once both register, and share every job', async () => {
    const namespace = uniqueNamespace('race');
    const jobs = 80;
    // Fires every second: the one that joins after the leader sharded gets its items at the next firing.
    const [first, second] = [manyJobs(namespace, jobs, '* * * * * *'), manyJobs(namespace, jobs, '* * * * * *')];
    const [a, b] = await Promise.all([sharded(first), sharded(second)]);
    expect(a.instanceId).not.toBe(b.instanceId);
    const zk = await observer(namespace);
    for (let index = 0; index < jobs; index++)
      await expectRegisteredTree(zk, `many-${index}`, [a.instanceId, b.instanceId]);
  });

  it('a resharding as a peer joins leaves the owner nodes of items that stay where they were untouched', async () => {
    const namespace = uniqueNamespace('stay');
    const zk = await observer(namespace);
    const owners = async (): Promise<Array<{ owner: string | undefined; mzxid: bigint | undefined }>> =>
      Promise.all(
        [0, 1, 2, 3].map(async (item) => {
          const node = await zk.getData(`/many-0/sharding/${item}/instance`);
          return { owner: node?.data.toString(), mzxid: node?.stat.mzxid };
        }),
      );
    const first = await sharded(manyJobs(namespace, 1, '* * * * * *', 4));
    const before = await owners();
    expect(before.map((item) => item.owner)).toEqual(Array(4).fill(first.instanceId));
    // The second instance gets its items at the leader's next firing after it joined.
    const second = await sharded(manyJobs(namespace, 1, '* * * * * *', 4));
    const after = await owners();
    const kept = [0, 1, 2, 3].filter((item) => after[item]!.owner === first.instanceId);
    const moved = [0, 1, 2, 3].filter((item) => after[item]!.owner === second.instanceId);
    expect(kept.length + moved.length).toBe(4);
    expect(kept.length).toBe(2);
    // Kept: not removed and created again (ElasticJob rewrites every owner; each rewrite is an event and a read
    // for every instance). Moved: written anew.
    for (const item of kept) expect(after[item]!.mzxid, `item ${item}`).toBe(before[item]!.mzxid);
    for (const item of moved) expect(after[item]!.mzxid! > before[item]!.mzxid!, `item ${item}`).toBe(true);
  });
});
