import { PreparationLead } from '../../lib/schedule/preparation-lead.js';
import { JobEventPublisher } from '../../lib/job/events/job-event-publisher.js';
import { Logger } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { ExecutionService } from '../../lib/job/execution/execution.service.js';
import type { JobConfiguration } from '../../lib/job/config/job-configuration.js';
import { InstanceService } from '../../lib/job/instance/instance.service.js';
import type { JobContext } from '../../lib/job/context/job-context.js';
import { JobPlugins } from '../../lib/job/plugins/job-plugins.js';
import { JobNodePath } from '../../lib/job/paths.js';
import { ServerService } from '../../lib/job/server/server.service.js';
import { JobNodeStorage } from '../../lib/job/storage/job-node-storage.js';
import type { Watcher } from '../../lib/registry/registry.types.js';
import type { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import { releaseAll } from '../support/resources.js';
import { eventually, startRegistry, uniqueNamespace } from '../support/zk.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
  await releaseAll();
});

const JOB = 'markers';
const config = { monitorExecution: true, failover: true } as JobConfiguration;

/** One instance's view of the job: its own session, cache and execution service, as a JobScheduler builds them. */
async function contender(
  namespace: string,
  instanceId: string,
): Promise<{
  execution: ExecutionService;
  registry: ZookeeperRegistryCenter;
  storage: JobNodeStorage;
  freezeCache: () => void;
}> {
  const registry = await startRegistry({ namespace });
  cleanups.push(() => registry.close());
  const paths = new JobNodePath(JOB);
  const logger = new Logger(`test:${instanceId}`);
  const ctx: JobContext = {
    jobName: JOB,
    paths,
    connection: registry,
    logger,
    storage: new JobNodeStorage(registry, paths, logger),
    instanceId,
    ip: instanceId.split('@-@')[0]!,
    waitTimeoutMs: 5000,
    plugins: new JobPlugins(logger),
    events: new JobEventPublisher(undefined, { jobName: JOB, instanceId, ip: instanceId.split('@-@')[0]! }),
    preparationLead: new PreparationLead(),
  };
  await ctx.storage.startCache();
  cleanups.push(() => ctx.storage.closeCache());
  await registry.createWithParents(
    paths.instance(instanceId),
    Buffer.from(`jobInstanceId: ${instanceId}\n`),
    'EPHEMERAL',
  );
  await ctx.storage.cached.settled();
  // Stops the cache from following ZooKeeper: what a cache lagging behind (just after a reconnection) looks like.
  const freezeCache = (): void =>
    registry.removePersistentRecursiveWatch(
      `/${JOB}`,
      (ctx.storage as unknown as { cache: { watcher: Watcher } }).cache.watcher,
    );
  return {
    execution: new ExecutionService(ctx, new InstanceService(ctx, new ServerService(ctx))),
    registry,
    storage: ctx.storage,
    freezeCache,
  };
}

describe('running markers', () => {
  it('a marker left by a dead instance is taken over by exactly one of two instances that both saw it', async () => {
    for (let round = 0; round < 5; round++) {
      const namespace = uniqueNamespace('markers');
      const setup = await startRegistry({ namespace });
      cleanups.push(() => setup.close());
      // The dead owner's persistent marker (failover on), on item 0 of a job whose instances are a and b.
      await setup.createWithParents(`/${JOB}/sharding/0/running`, Buffer.from('10.9.9.9@-@99'), 'PERSISTENT');
      const a = await contender(namespace, '10.0.0.1@-@1');
      const b = await contender(namespace, '10.0.0.2@-@2');
      // Both start item 0 at once (say a failover claim and the item's new owner after a reshard).
      const [wonByA, wonByB] = await Promise.all([
        a.execution.registerJobBegin([0], config),
        b.execution.registerJobBegin([0], config),
      ]);
      expect([...wonByA, ...wonByB], `round ${round}`).toEqual([0]);
      const winner = wonByA.length > 0 ? '10.0.0.1@-@1' : '10.0.0.2@-@2';
      expect((await setup.getData(`/${JOB}/sharding/0/running`))?.data.toString()).toBe(winner);
    }
  });

  it('a marker held by a live instance is never taken; items without a marker are created for us', async () => {
    const namespace = uniqueNamespace('markers-live');
    const setup = await startRegistry({ namespace });
    cleanups.push(() => setup.close());
    for (const item of [0, 1, 2]) await setup.ensurePath(`/${JOB}/sharding/${item}`);
    const a = await contender(namespace, '10.0.0.1@-@1');
    const b = await contender(namespace, '10.0.0.2@-@2');
    expect(await a.execution.registerJobBegin([0, 1], config)).toEqual([0, 1]);
    // b has seen a's markers (a is online): b gets nothing, and the markers stay a's. (Had b not seen them, its
    // create would just fail: the check that a marker's owner is live would not be reached.)
    await eventually(
      () => [0, 1].map((item) => b.storage.cached.has(`/${JOB}/sharding/${item}/running`)),
      (seen) => seen.every(Boolean),
      10_000,
      "a's markers in b's cache",
    );
    expect(await b.execution.registerJobBegin([1, 2], config)).toEqual([2]);
    expect((await setup.getData(`/${JOB}/sharding/1/running`))?.data.toString()).toBe('10.0.0.1@-@1');
    expect((await setup.getData(`/${JOB}/sharding/2/running`))?.data.toString()).toBe('10.0.0.2@-@2');
  });

  it('an owner that has come back is not taken over on the word of a cache that has not seen it come back', async () => {
    const namespace = uniqueNamespace('markers-lag');
    const setup = await startRegistry({ namespace });
    cleanups.push(() => setup.close());
    const owner = '10.0.0.1@-@1';
    // The owner's marker from before it lost its session; it is offline.
    await setup.createWithParents(`/${JOB}/sharding/0/running`, Buffer.from(owner), 'PERSISTENT');
    const b = await contender(namespace, '10.0.0.2@-@2');
    b.freezeCache();
    // The owner comes back with a new session: re-registers, replaces its stale marker and starts the item.
    await setup.createWithParents(`/${JOB}/instances/${owner}`, Buffer.from(`jobInstanceId: ${owner}\n`), 'EPHEMERAL');
    await setup.remove(`/${JOB}/sharding/0/running`);
    await setup.createWithParents(`/${JOB}/sharding/0/running`, Buffer.from(owner), 'PERSISTENT');
    // b's cache still shows the old marker and no owner instance: b must not run the item.
    expect(await b.execution.registerJobBegin([0], config)).toEqual([]);
    expect((await setup.getData(`/${JOB}/sharding/0/running`))?.data.toString()).toBe(owner);
  });

  it('removes only markers that are still ours: a marker a peer has taken over meanwhile stays', async () => {
    const namespace = uniqueNamespace('markers-own');
    const setup = await startRegistry({ namespace });
    cleanups.push(() => setup.close());
    await setup.ensurePath(`/${JOB}/sharding/1`);
    const me = '10.0.0.1@-@1';
    const peer = '10.0.0.2@-@2';
    // A marker of ours left over (its removal failed), which a peer then took over while our cache lagged.
    await setup.createWithParents(`/${JOB}/sharding/0/running`, Buffer.from(me), 'PERSISTENT');
    const a = await contender(namespace, me);
    a.freezeCache();
    await setup.setData(`/${JOB}/sharding/0/running`, Buffer.from(peer));
    await a.execution.removeStaleOwnMarkers(2);
    expect((await setup.getData(`/${JOB}/sharding/0/running`))?.data.toString()).toBe(peer);
    // An item we run whose marker a peer took over (it judged us gone): our completion leaves the peer's marker.
    expect(await a.execution.registerJobBegin([1], config)).toEqual([1]);
    await setup.setData(`/${JOB}/sharding/1/running`, Buffer.from(peer));
    await a.execution.registerJobCompleted([1], config);
    expect((await setup.getData(`/${JOB}/sharding/1/running`))?.data.toString()).toBe(peer);
  });

  it('clearing our markers after a new session leaves those of items a firing has already started on it', async () => {
    const namespace = uniqueNamespace('markers-resession');
    const setup = await startRegistry({ namespace });
    cleanups.push(() => setup.close());
    await setup.ensurePath(`/${JOB}/sharding/1`);
    const me = '10.0.0.1@-@1';
    // Item 0: left by us on the old session. Item 1: started by a firing on the new session, still running.
    await setup.createWithParents(`/${JOB}/sharding/0/running`, Buffer.from(me), 'PERSISTENT');
    const a = await contender(namespace, me);
    expect(await a.execution.registerJobBegin([1], config)).toEqual([1]);
    await a.execution.clearOwnRunningInfo(2, { keepRunningHere: true });
    expect(await setup.exists(`/${JOB}/sharding/0/running`)).toBeUndefined();
    expect((await setup.getData(`/${JOB}/sharding/1/running`))?.data.toString()).toBe(me);
  });
});
