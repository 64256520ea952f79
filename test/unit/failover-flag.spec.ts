import { Logger } from '@nestjs/common';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JobContext } from '../../lib/job/context/job-context.js';
import { JobEventPublisher } from '../../lib/job/events/job-event-publisher.js';
import { FailoverService } from '../../lib/job/failover/failover.service.js';
import { JobNodePath } from '../../lib/job/paths.js';
import { JobPlugins } from '../../lib/job/plugins/job-plugins.js';
import { JobNodeStorage } from '../../lib/job/storage/job-node-storage.js';
import { PreparationLead } from '../../lib/schedule/preparation-lead.js';
import { FakeZookeeper, type FakeRegistryCenter } from '../support/fake-registry.js';

/**
 * A peer flags the items of a crashed instance for failover (FailoverService.setCrashedFailoverFlag) in one write
 * resting on the crashed instance's `running` marker, so that a peer flagging late writes nothing: a full run of
 * workflow-faults.spec saw a slow peer flag an item another peer had taken over and run, and take it over again.
 */

const DEAD = '10.0.0.9@-@9';
const TAKER = '10.0.0.2@-@2';
const ME = '10.0.0.1@-@1';
const paths = new JobNodePath('job');
const stores: JobNodeStorage[] = [];
const clients: FakeRegistryCenter[] = [];

beforeAll(() => {
  Logger.overrideLogger(['error']);
});

afterEach(async () => {
  for (const storage of stores.splice(0)) storage.closeCache();
  for (const client of clients.splice(0)) await client.close();
});

async function setUp(): Promise<{ zk: FakeZookeeper; peer: FakeRegistryCenter; failover: FailoverService }> {
  const zk = new FakeZookeeper();
  const peer = await zk.connect('ns');
  const client = await zk.connect('ns');
  clients.push(peer, client);
  await peer.persist(paths.config, Buffer.from('jobName: job\nshardingTotalCount: 1\nfailover: true\n'));
  // The crashed instance was running item 0: its marker stays (failover on).
  await peer.persist(paths.running(0), Buffer.from(DEAD));
  const logger = new Logger('test:job');
  const storage = new JobNodeStorage(client, paths, logger);
  stores.push(storage);
  const ctx: JobContext = {
    jobName: 'job',
    paths,
    storage,
    connection: client,
    logger,
    instanceId: ME,
    ip: '10.0.0.1',
    waitTimeoutMs: 1_000,
    plugins: new JobPlugins(logger),
    events: new JobEventPublisher(undefined, { jobName: 'job', instanceId: ME, ip: '10.0.0.1' }),
    preparationLead: new PreparationLead(),
  };
  await storage.startCache();
  // Only the flag is under test: the server and instance services are not reached by it.
  return { zk, peer, failover: new FailoverService(ctx, undefined as never, undefined as never) };
}

describe('flagging a crashed instance item for failover', () => {
  it('flags it and removes its marker, in one write', async () => {
    const { zk, failover } = await setUp();
    await failover.setCrashedFailoverFlag(0);
    expect(zk.get(`/ns${paths.failoverItem(0)}`)).toBeDefined();
    expect(zk.get(`/ns${paths.running(0)}`)).toBeUndefined();
    expect(zk.get(`/ns${paths.failover(0)}`)).toBeUndefined();
  });

  it('writes nothing when another peer flagged it and a taker ran it to its end meanwhile', async () => {
    const { zk, peer, failover } = await setUp();
    // The other peer's flag removed the marker; the taker's end removed its own: nothing of item 0 is left.
    await peer.remove(paths.running(0));
    await failover.setCrashedFailoverFlag(0);
    expect(zk.get(`/ns${paths.failoverItem(0)}`)).toBeUndefined();
  });

  it('writes nothing while a taker holds it (its own marker there again)', async () => {
    const { zk, peer, failover } = await setUp();
    await peer.transaction([
      { op: 'setData', path: paths.running(0), data: Buffer.from(TAKER) },
      { op: 'create', path: paths.failover(0), data: Buffer.from(TAKER), mode: 'EPHEMERAL' },
    ]);
    await failover.setCrashedFailoverFlag(0);
    expect(zk.get(`/ns${paths.failoverItem(0)}`)).toBeUndefined();
    expect(zk.get(`/ns${paths.failover(0)}`)?.data).toBe(TAKER);
    expect(zk.get(`/ns${paths.running(0)}`)?.data).toBe(TAKER);
  });
});
