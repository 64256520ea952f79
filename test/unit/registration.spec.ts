import { Logger } from '@nestjs/common';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RegistryError } from '../../lib/errors/elastic-job.errors.js';
import { resolveJobConfiguration } from '../../lib/job/config/job-configuration.validator.js';
import { JobScheduler } from '../../lib/job/scheduler/job-scheduler.js';
import type { ShardingService } from '../../lib/job/sharding/sharding.service.js';
import type { TransactionOp } from '../../lib/registry/registry.types.js';
import { FakeZookeeper, type FakeRegistryCenter } from '../support/fake-registry.js';

beforeAll(() => {
  Logger.overrideLogger(['error']);
});

const LEADER = '/job/leader/election/instance';
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function scheduler(
  registry: FakeRegistryCenter,
  pid = 1,
  overwrite = false,
  ip = '10.0.0.1',
  options: { staticSharding?: boolean; disabled?: boolean } = {},
): JobScheduler {
  const config = resolveJobConfiguration({
    jobName: 'job',
    cron: '0 0 0 1 1 *',
    shardingTotalCount: 2,
    overwrite,
    ...options,
  });
  const job = new JobScheduler(
    { config, owner: 'Jobs.job', handler: async () => undefined },
    registry,
    { ip, pid },
    { waitTimeoutMs: 5_000, baseSleepTimeMs: 100, maxSleepTimeMs: 500, maxRetries: 3 },
  );
  cleanups.push(async () => {
    await job.shutdown(0);
    await registry.close();
  });
  return job;
}

/** Runs `before` once, just before the registry is first asked to write this instance's node. */
function beforeOwnInstanceNode(registry: FakeRegistryCenter, before: () => Promise<void>): void {
  const writesOwnNode = (path: string): boolean => path.startsWith('/job/instances/');
  let done = false;
  const once = async (path: string): Promise<void> => {
    if (done || !writesOwnNode(path)) return;
    done = true;
    await before();
  };
  const transaction = registry.transaction.bind(registry);
  registry.transaction = async (ops: readonly TransactionOp[]) => {
    for (const op of ops) await once(op.path);
    return transaction(ops);
  };
  const create = registry.create.bind(registry);
  registry.create = async (...args: Parameters<FakeRegistryCenter['create']>) => {
    await once(args[0]);
    return create(...args);
  };
}

type PathCall = (path: string, ...rest: never[]) => Promise<unknown>;

/** Records the path of each call of `method` that `wanted` accepts; the call goes on as before. */
function pathsAskedOf(
  registry: FakeRegistryCenter,
  method: 'getData' | 'create' | 'createContainer' | 'createProtectedEphemeralSequential',
  wanted: (path: string) => boolean = () => true,
): string[] {
  const asked: string[] = [];
  const calls = registry as unknown as Record<typeof method, PathCall>;
  const original = calls[method].bind(registry);
  calls[method] = (path, ...rest) => {
    if (wanted(path)) asked.push(path);
    return original(path, ...rest);
  };
  return asked;
}

/** Records each transaction sent, its ops as `shown` writes them; the transaction goes on as before. */
function transactionsSent(registry: FakeRegistryCenter, shown: (op: TransactionOp) => string | undefined): string[][] {
  const sent: string[][] = [];
  const transaction = registry.transaction.bind(registry);
  registry.transaction = async (ops: readonly TransactionOp[]) => {
    sent.push(ops.flatMap((op) => shown(op) ?? []));
    return transaction(ops);
  };
  return sent;
}

describe('registration on the in-memory registry', () => {
  it("ends with a leader when the leader node goes after this instance's election, before its instance node", async () => {
    const zk = new FakeZookeeper();
    const peer = await zk.connect('ns');
    cleanups.push(() => peer.close());
    // A peer leads (its node, as its session would hold it) when this instance registers...
    await peer.createWithParents(LEADER, Buffer.from('10.0.0.9@-@9'), 'EPHEMERAL');
    const registry = await zk.connect('ns');
    // ... and goes away after this instance looked for a leader but before its instance node is written: when the
    // deletion is heard, this instance may not lead yet (it is not online), so nobody elects then.
    beforeOwnInstanceNode(registry, () => peer.remove(LEADER));
    const job = scheduler(registry);
    await job.register();
    for (let turn = 0; turn < 50 && !job.status().isLeader; turn++) await zk.idle();
    expect(job.status().registered).toBe(true);
    expect(job.status().isLeader).toBe(true);
    expect((await registry.getData(LEADER))?.data.toString()).toBe('10.0.0.1@-@1');
  });

  it.each([
    ['ends with a leader', false],
    ['on a disabled server, does not elect itself', true],
  ])('a statically sharded job whose leader goes during the registration %s', async (_, disabled) => {
    const zk = new FakeZookeeper();
    const peer = await zk.connect('ns');
    cleanups.push(() => peer.close());
    await peer.createWithParents(LEADER, Buffer.from('10.0.0.9@-@9'), 'EPHEMERAL');
    // Sharded once already: a static job is not resharded, so no resharding flag elects a leader on the way.
    await peer.createWithParents('/job/sharding/0/instance', Buffer.from('10.0.0.9@-@9'), 'PERSISTENT');
    await peer.createWithParents('/job/sharding/1/instance', Buffer.from('10.0.0.9@-@9'), 'PERSISTENT');
    const registry = await zk.connect('ns');
    beforeOwnInstanceNode(registry, () => peer.remove(LEADER));
    const job = scheduler(registry, 1, false, '10.0.0.1', { staticSharding: true, disabled });
    await job.register();
    for (let turn = 0; turn < 50 && !job.status().isLeader; turn++) await zk.idle();
    expect(job.status().registered).toBe(true);
    expect(job.status().isLeader).toBe(!disabled);
  });

  it('does not rewrite, with overwrite, the root and config nodes a peer starting at the same moment wrote alike', async () => {
    const zk = new FakeZookeeper();
    const registries = await Promise.all([zk.connect('ns'), zk.connect('ns')]);
    const rewrites: string[] = [];
    for (const registry of registries) {
      const setData = registry.setData.bind(registry);
      registry.setData = async (path: string, data: Buffer) => {
        if (path === '/job' || path === '/job/config') rewrites.push(path);
        return setData(path, data);
      };
    }
    const jobs = registries.map((registry, index) => scheduler(registry, index + 1, true));
    await Promise.all(jobs.map((job) => job.register()));
    await zk.idle();
    expect(jobs.map((job) => job.status().registered)).toEqual([true, true]);
    expect(rewrites).toEqual([]);
  });

  it('an attempt that fails at its instance node never shows peers a leader node, however often it is retried', async () => {
    const zk = new FakeZookeeper();
    const blocker = await zk.connect('ns');
    cleanups.push(() => blocker.close());
    // `instances` held as an ephemeral node: ZooKeeper refuses children under it (NO_CHILDREN_FOR_EPHEMERALS).
    await blocker.createWithParents('/job/instances', Buffer.alloc(0), 'EPHEMERAL');
    const registry = await zk.connect('ns');
    // After each of our requests, what a peer would see: a leader node between an attempt's election and its
    // clean-up is one that never fires, stalling peers that wait for it to shard.
    const leaderSeen: string[] = [];
    const look = () => {
      const node = zk.get(`/ns${LEADER}`);
      if (node !== undefined) leaderSeen.push(node.data);
    };
    for (const method of ['create', 'transaction'] as const) {
      const calls = registry as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      const original = calls[method]!.bind(registry);
      calls[method] = (...args) => original(...args).finally(look);
    }
    const job = scheduler(registry);
    await job.register();
    for (let turn = 0; turn < 20; turn++) await zk.idle();
    expect(job.status().registered).toBe(false);
    expect(leaderSeen).toEqual([]);
  });

  it('shards once registered, and a firing that comes meanwhile waits for that sharding instead of sharding too', async () => {
    const zk = new FakeZookeeper();
    const registry = await zk.connect('ns');
    // A sharding's transaction removes the flag (an owner that stays is not written again: not counted by it).
    const assignments = transactionsSent(registry, (op) =>
      op.op === 'remove' && op.path === '/job/leader/sharding/necessary' ? op.path : undefined,
    );
    const job = scheduler(registry);
    await job.register();
    await zk.idle();
    // Sharded at registration (issue 43), with no firing.
    expect(zk.get('/ns/job/leader/sharding/necessary')).toBeUndefined();
    expect(job.status().shardingItems).toEqual([0, 1]);
    // Flagged again; an early sharding and a firing's then ask together: one shards, the other waits and finds
    // the flag gone.
    await registry.create('/job/leader/sharding/necessary', Buffer.from(''));
    await zk.idle();
    const sharding = (job as unknown as { services: { sharding: ShardingService } }).services.sharding;
    const config = resolveJobConfiguration({ jobName: 'job', cron: '0 0 0 1 1 *', shardingTotalCount: 2 });
    await Promise.all([sharding.shardEarly(config), sharding.shardingIfNecessary(config)]);
    expect(assignments.filter((paths) => paths.length > 0)).toHaveLength(2);
  });

  it('a sharding applied whose answer was lost, then refused when sent again alone, is taken as written', async () => {
    const zk = new FakeZookeeper();
    const registry = await zk.connect('ns');
    const job = scheduler(registry);
    await job.register();
    await zk.idle();
    expect(job.status().shardingItems).toEqual([0, 1]);
    // Flagged again; the next sharding's combined request is applied, but its answer is lost with the connection and
    // the TransactionCoalescer's resend of it alone is refused (the flag it removes is gone): NO_NODE.
    await registry.create('/job/leader/sharding/necessary', Buffer.from(''));
    await zk.idle();
    const transaction = registry.transaction.bind(registry);
    registry.transaction = async (ops: readonly TransactionOp[]) => {
      await transaction(ops);
      if (ops.some((op) => op.op === 'remove' && op.path === '/job/leader/sharding/necessary'))
        throw new RegistryError('NO_NODE', '/job/leader/sharding/necessary', 'refused when sent again alone');
    };
    const sharding = (job as unknown as { services: { sharding: ShardingService } }).services.sharding;
    const config = resolveJobConfiguration({ jobName: 'job', cron: '0 0 0 1 1 *', shardingTotalCount: 2 });
    await sharding.shardEarly(config);
    await zk.idle();
    // ElasticJob's step-by-step way on that tree would have cleared the owners, then failed at the flag.
    expect(zk.get('/ns/job/sharding/0/instance')).toBeDefined();
    expect(zk.get('/ns/job/sharding/1/instance')).toBeDefined();
    expect(zk.get('/ns/job/leader/sharding/processing')).toBeUndefined();
    expect(job.status().shardingItems).toEqual([0, 1]);
  });

  it('joins a job that has a leader without entering its election latch', async () => {
    const zk = new FakeZookeeper();
    const peer = await zk.connect('ns');
    cleanups.push(() => peer.close());
    await peer.createWithParents(LEADER, Buffer.from('10.0.0.9@-@9'), 'EPHEMERAL');
    const registry = await zk.connect('ns');
    // Every peer starting at once used to queue in each job's latch only to find the leader there.
    const latchEntries = pathsAskedOf(registry, 'createProtectedEphemeralSequential');
    const job = scheduler(registry);
    await job.register();
    await zk.idle();
    expect(job.status().registered).toBe(true);
    expect(job.status().isLeader).toBe(false);
    expect(latchEntries).toEqual([]);
  });

  it("elects a new job's leader in its instance's transaction, making no latch node nor container", async () => {
    const zk = new FakeZookeeper();
    const registry = await zk.connect('ns');
    const leaderCreates = pathsAskedOf(registry, 'create', (path) => path === LEADER);
    const latchEntries = pathsAskedOf(registry, 'createProtectedEphemeralSequential');
    const containers = pathsAskedOf(registry, 'createContainer');
    const transactions = transactionsSent(registry, (op) => (op.path === LEADER ? op.path : undefined));
    const job = scheduler(registry);
    await job.register();
    await zk.idle();
    expect(job.status().isLeader).toBe(true);
    expect(leaderCreates).toEqual([]);
    expect(transactions.filter((paths) => paths.length > 0)).toEqual([[LEADER]]);
    expect(latchEntries).toEqual([]);
    expect(containers).toEqual([]);
    expect(await registry.exists('/job/leader/election/latch')).toBeUndefined();
  });

  it('queues in the election latch behind a participant there, and releases it when that one led first', async () => {
    const zk = new FakeZookeeper();
    const peer = await zk.connect('ns');
    cleanups.push(() => peer.close());
    // A Java ElasticJob peer electing: its node in the latch, as Curator names it.
    const latch = '/job/leader/election/latch';
    await peer.createWithParents(latch, Buffer.from(''), 'PERSISTENT');
    const peerNode = await peer.createProtectedEphemeralSequential(latch, 'latch-', Buffer.from(''), Date.now() + 5000);
    const registry = await zk.connect('ns');
    // Once we queue behind it, it takes the leadership and leaves the latch: we hold it to find a leader there.
    const enter = registry.createProtectedEphemeralSequential.bind(registry);
    const latchEntries: string[] = [];
    registry.createProtectedEphemeralSequential = async (...args) => {
      const ours = await enter(...args);
      latchEntries.push(ours);
      await peer.createWithParents(LEADER, Buffer.from('10.0.0.9@-@9'), 'EPHEMERAL');
      await peer.remove(peerNode);
      return ours;
    };
    const job = scheduler(registry);
    await job.register();
    await zk.idle();
    expect(latchEntries).toHaveLength(1);
    expect(job.status().registered).toBe(true);
    expect(job.status().isLeader).toBe(false);
    expect((await registry.getData(LEADER))?.data.toString()).toBe('10.0.0.9@-@9');
    expect(await registry.getChildren(latch)).toEqual([]);
  });

  it("checks the job name's owner from the cache the registration reads the tree into", async () => {
    const zk = new FakeZookeeper();
    const registry = await zk.connect('ns');
    const rootReads = pathsAskedOf(registry, 'getData', (path) => path === '/job');
    const job = scheduler(registry);
    await job.checkConflict();
    await job.register();
    expect(job.status().registered).toBe(true);
    expect(rootReads).toEqual(['/job']);
  });

  it("reads no peer's instance node when peers join: only the one sharding needs what they say", async () => {
    const zk = new FakeZookeeper();
    const registries = [await zk.connect('ns'), await zk.connect('ns'), await zk.connect('ns')];
    const instanceReads = registries.map((registry) =>
      pathsAskedOf(registry, 'getData', (path) => path.startsWith('/job/instances/')),
    );
    // The leader first; then a peer that finds it in the tree; then one the others hear join.
    for (const [index, registry] of registries.entries()) {
      await scheduler(registry, index + 1).register();
      await zk.idle();
    }
    expect(instanceReads).toEqual([[], [], []]);
  });

  it('peers setting a new job up together: the one whose transaction failed reads no directory back', async () => {
    const zk = new FakeZookeeper();
    const registries = [await zk.connect('ns'), await zk.connect('ns')];
    const directories = new Set(['/job/servers', '/job/instances', '/job/sharding', '/job/leader', '/job/trigger']);
    const directoryReads = registries.map((registry) =>
      pathsAskedOf(registry, 'getData', (path) => directories.has(path)),
    );
    const setUps: boolean[] = [];
    for (const registry of registries) {
      const transaction = registry.transaction.bind(registry);
      registry.transaction = async (ops: readonly TransactionOp[]) => {
        const setUp = ops.some((op) => op.path === '/job/config');
        return transaction(ops).then(
          () => void (setUp && setUps.push(true)),
          (error: unknown) => {
            if (setUp) setUps.push(false);
            throw error;
          },
        );
      };
    }
    // Both race for the leader node (neither cache showed a leader), each in its instance's transaction: the
    // loser's fails with NODE_EXISTS and is sent again without it.
    const leaderCreates = registries.map((registry) => pathsAskedOf(registry, 'create', (path) => path === LEADER));
    const announces = registries.map((registry) =>
      transactionsSent(registry, (op) =>
        op.path.startsWith('/job/instances/') || op.path === LEADER ? op.path : undefined,
      ),
    );
    const jobs = registries.map((registry, index) => scheduler(registry, index + 1));
    await Promise.all(jobs.map((job) => job.register()));
    await zk.idle();
    expect(jobs.filter((job) => job.status().isLeader)).toHaveLength(1);
    expect(leaderCreates).toEqual([[], []]);
    const withLeader = announces.map((sent) => sent.filter((paths) => paths.includes(LEADER)).length);
    expect(withLeader).toEqual([1, 1]);
    expect(announces.map((sent) => sent.filter((paths) => paths.length > 0).length).sort()).toEqual([1, 2]);
    expect(setUps.sort()).toEqual([false, true]);
    expect(jobs.every((job) => job.status().registered)).toBe(true);
    expect(directoryReads).toEqual([[], []]);
  });

  it("sets the resharding flag once for peers joining before the leader's next firing", async () => {
    const zk = new FakeZookeeper();
    const registries = [await zk.connect('ns'), await zk.connect('ns'), await zk.connect('ns')];
    const flagCreates = pathsAskedOf(registries[0]!, 'create', (path) => path === '/job/leader/sharding/necessary');
    for (const [index, registry] of registries.entries()) {
      await scheduler(registry, index + 1).register();
      await zk.idle();
    }
    // The leader's own registration set it (a transaction) and sharded at once (issue 43); the first join set it
    // again, and the second found it set.
    expect(zk.get('/ns/job/leader/sharding/necessary')).toBeDefined();
    expect(flagCreates).toEqual(['/job/leader/sharding/necessary']);
  });

  it('joining while the resharding flag is set, writes its server and instance nodes as one transaction', async () => {
    const zk = new FakeZookeeper();
    const leaderRegistry = await zk.connect('ns');
    await scheduler(leaderRegistry, 1).register();
    await zk.idle();
    // The leader sharded once registered (issue 43), which took the flag away: set again, as a join the leader has
    // not sharded for yet leaves it.
    expect(zk.get('/ns/job/leader/sharding/necessary')).toBeUndefined();
    await leaderRegistry.create('/job/leader/sharding/necessary', Buffer.from(''));
    const registry = await zk.connect('ns');
    // Written one after the other, a peer registering between them would remove the server node as offline.
    const transactions = transactionsSent(registry, (op) => (op.op === 'check' ? undefined : `${op.op} ${op.path}`));
    await scheduler(registry, 2, false, '10.0.0.2').register();
    await zk.idle();
    expect(transactions).toContainEqual(['create /job/servers/10.0.0.2', 'create /job/instances/10.0.0.2@-@2']);
  });

  it('writes a new instance as one transaction: server, instance, its leader node and the resharding flag', async () => {
    const zk = new FakeZookeeper();
    const registry = await zk.connect('ns');
    const transactions = transactionsSent(registry, (op) => (op.op === 'check' ? undefined : `${op.op} ${op.path}`));
    const job = scheduler(registry);
    await job.register();
    await zk.idle();
    expect(transactions).toContainEqual([
      'create /job/servers/10.0.0.1',
      'create /job/instances/10.0.0.1@-@1',
      'create /job/leader/election/instance',
      'create /job/leader/sharding/necessary',
    ]);
    expect(registry.stats.writes).toBeLessThanOrEqual(7);
    expect(job.status().isLeader).toBe(true);
  });
});
