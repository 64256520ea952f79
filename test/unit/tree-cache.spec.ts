import { Logger } from '@nestjs/common';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { JobNodePath } from '../../lib/job/paths.js';
import { TreeCache, type TreeEvent } from '../../lib/registry/tree-cache.js';
import { FakeRegistryCenter, FakeZookeeper } from '../support/fake-registry.js';

const text = (value: string): Buffer => Buffer.from(value, 'utf8');

beforeAll(() => {
  Logger.overrideLogger(['error']);
});

const caches: TreeCache[] = [];
afterEach(() => {
  for (const cache of caches.splice(0)) cache.close();
});

/** A writer (another instance, an operator) and a started cache of `/job` on its own session. */
async function setUp(
  shape?: (path: string) => ReturnType<JobNodePath['cacheShape']>,
  before?: (writer: FakeRegistryCenter) => Promise<void>,
) {
  const zk = new FakeZookeeper();
  const writer = await zk.connect('ns');
  const client = await zk.connect('ns');
  await writer.create('/job', text('root'));
  await before?.(writer);
  const cache = new TreeCache(client, '/job', 'test', shape);
  caches.push(cache);
  const events: TreeEvent[] = [];
  cache.listen((event) => events.push(event));
  await cache.start();
  /** Every notification delivered and every read it set off applied. */
  const caughtUp = async (): Promise<void> => {
    await zk.idle();
    await cache.settled();
  };
  return { zk, writer, client, cache, events, caughtUp };
}

describe('TreeCache on the fake registry', () => {
  it('loads the subtree at start, parents before children', async () => {
    const { cache, events } = await setUp(undefined, async (writer) => {
      await writer.create('/job/a', text('A'));
      await writer.create('/job/b', text(''));
      await writer.create('/job/b/c', text('C'));
      await writer.create('/elsewhere', text('not ours'));
    });
    expect(cache.paths().sort()).toEqual(['/job', '/job/a', '/job/b', '/job/b/c']);
    expect(cache.get('/job')).toBe('root');
    expect(cache.get('/job/b/c')).toBe('C');
    expect(cache.children('/job').sort()).toEqual(['a', 'b']);
    expect(events.map((event) => `${event.type} ${event.path} ${event.data}`)).toEqual([
      'ADDED /job root',
      'ADDED /job/a A',
      'ADDED /job/b ',
      'ADDED /job/b/c C',
    ]);
  });

  it('keeps empty nodes as empty strings, and lists children as they come and go', async () => {
    const { writer, cache, caughtUp } = await setUp(undefined, async (w) => {
      await w.create('/job/a', text(''));
      await w.create('/job/b', text(''));
    });
    await writer.create('/job/c', text(''));
    await caughtUp();
    // Most of a job's nodes are empty directories: data kept as strings, the empty one shared.
    expect(cache.get('/job/a')).toBe('');
    expect(cache.get('/job/c')).toBe('');
    expect(cache.children('/job/a')).toEqual([]);
    await writer.create('/job/a/x', text('X'));
    await caughtUp();
    expect(cache.children('/job/a')).toEqual(['x']);
    await writer.remove('/job/a/x');
    await writer.setData('/job/b', text('B'));
    await caughtUp();
    expect(cache.children('/job/a')).toEqual([]);
    expect(cache.get('/job/b')).toBe('B');
    expect(cache.get('/job/a')).toBe('');
  });

  it('lists many children (a job of thousands of items) as they come and go, one each', async () => {
    const { writer, cache, caughtUp } = await setUp(undefined, async (w) => {
      await w.create('/job/sharding', text(''));
    });
    const names = Array.from({ length: 40 }, (_, item) => String(item));
    for (const name of names) await writer.create(`/job/sharding/${name}`, text(''));
    await caughtUp();
    expect(cache.children('/job/sharding').sort()).toEqual([...names].sort());
    for (const gone of names.filter((name) => Number(name) % 3 === 0)) await writer.remove(`/job/sharding/${gone}`);
    await caughtUp();
    expect(cache.children('/job/sharding').sort()).toEqual(names.filter((name) => Number(name) % 3 !== 0).sort());
    for (const gone of names.filter((name) => Number(name) % 3 !== 0)) await writer.remove(`/job/sharding/${gone}`);
    await caughtUp();
    expect(cache.children('/job/sharding')).toEqual([]);
    await writer.create('/job/sharding/0', text(''));
    await caughtUp();
    expect(cache.children('/job/sharding')).toEqual(['0']);
  });

  it('applies changes in the order ZooKeeper made them, one event each', async () => {
    const { writer, cache, events, caughtUp } = await setUp(undefined, async (w) => {
      await w.create('/job/a', text('A'));
      await w.create('/job/b', text(''));
      await w.create('/job/b/c', text('C'));
    });
    events.length = 0;
    await writer.setData('/job/a', text('A2'));
    await writer.create('/job/d', text('D'));
    await writer.removeRecursive('/job/b');
    await writer.setData('/job/a', text('A3'));
    await writer.create('/job/b', text('again'));
    await caughtUp();
    expect(events.map((event) => `${event.type} ${event.path} ${event.data}`)).toEqual([
      'UPDATED /job/a A2',
      'ADDED /job/d D',
      'DELETED /job/b/c C',
      'DELETED /job/b ',
      'UPDATED /job/a A3',
      'ADDED /job/b again',
    ]);
    expect(cache.get('/job/a')).toBe('A3');
    expect(cache.children('/job/b')).toEqual([]);
    expect(cache.has('/job/b/c')).toBe(false);
  });

  it("follows the job's cache shape: lazy running markers, unread latch participants, ignored failover latch", async () => {
    const paths = new JobNodePath('job');
    const { writer, client, cache, events, caughtUp } = await setUp((path) => paths.cacheShape(path));
    await writer.transaction(
      paths
        .skeleton()
        .filter((path) => path !== paths.root)
        .map((path) => ({ op: 'create', path, data: text(''), mode: 'PERSISTENT' })),
    );
    // The latch directories are containers, made when a latch is first entered.
    await writer.createContainer(paths.leaderElectionLatch);
    await writer.createContainer(paths.failoverLatch);
    await writer.create(paths.shardingItem(0), text(''));
    await caughtUp();
    const reads = client.stats.reads;
    events.length = 0;
    await writer.create(paths.running(0), text('10.0.0.1@-@1'));
    await writer.create(`${paths.leaderElectionLatch}/_c_x-latch-0000000000`, text('participant'));
    await writer.create(`${paths.failoverLatch}/_c_y-latch-0000000000`, text(''));
    await writer.setData(paths.shardingItem(0), text('directory data nobody reads'));
    await caughtUp();
    // Nothing of this was read: the marker is lazy, the participant and the directory are listed only.
    expect(client.stats.reads).toBe(reads);
    expect(cache.has(paths.running(0))).toBe(true);
    expect(cache.isUnread(paths.running(0))).toBe(true);
    expect(cache.get(paths.running(0))).toBeUndefined();
    expect(cache.children(paths.leaderElectionLatch)).toEqual(['_c_x-latch-0000000000']);
    expect(cache.get(`${paths.leaderElectionLatch}/_c_x-latch-0000000000`)).toBe('');
    expect(cache.has(`${paths.failoverLatch}/_c_y-latch-0000000000`)).toBe(false);
    expect(events.map((event) => `${event.type} ${event.path}`)).toEqual([
      `ADDED ${paths.running(0)}`,
      `ADDED ${paths.leaderElectionLatch}/_c_x-latch-0000000000`,
    ]);
    await cache.readUnread([paths.running(0)]);
    expect(cache.get(paths.running(0))).toBe('10.0.0.1@-@1');
    expect(client.stats.reads).toBe(reads + 1);
    expect(events.at(-1)).toEqual({ type: 'UPDATED', path: paths.running(0), data: '10.0.0.1@-@1' });
  });

  it('a re-sync leaves unread the lazy nodes it finds, and reads again those whose data it held', async () => {
    const paths = new JobNodePath('job');
    const { writer, client, cache, caughtUp } = await setUp(
      (path) => paths.cacheShape(path),
      async (w) => {
        await w.createWithParents(paths.running(0), text('10.0.0.1@-@1'), 'PERSISTENT');
        await w.createWithParents(paths.running(1), text('10.0.0.1@-@2'), 'PERSISTENT');
      },
    );
    // Found by the first read: known to exist, not read.
    expect(cache.isUnread(paths.running(0))).toBe(true);
    await cache.readUnread([paths.running(1)]);
    await client.disconnect();
    await writer.setData(paths.running(1), text('10.0.0.1@-@3'));
    await client.reconnect();
    await caughtUp();
    // A marker whose owner we knew (a stale one of ours, say) is still known after it, as it is now.
    expect(cache.isUnread(paths.running(0))).toBe(true);
    expect(cache.get(paths.running(1))).toBe('10.0.0.1@-@3');
  });

  it('settled() waits for the reads set off by events received so far', async () => {
    const { zk, writer, client, cache } = await setUp(undefined, (w) =>
      w.create('/job/a', text('A')).then(() => undefined),
    );
    // The reads the notifications set off are answered only when let go (not by how many microtasks a step takes).
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const getData = client.getData.bind(client);
    client.getData = async (path, watcher) => {
      await held;
      return getData(path, watcher);
    };
    for (let round = 1; round <= 20; round++) await writer.setData('/job/a', text(`A${round}`));
    await client.delivered(); // every notification heard; the reads they set off are not answered yet
    expect(cache.get('/job/a')).not.toBe('A20');
    const settling = cache.settled();
    // Let go on the next turn of the event loop: past every microtask, so only a settled() that waits sees A20.
    setImmediate(letGo);
    await settling;
    expect(cache.get('/job/a')).toBe('A20');
    await zk.idle();
  });

  it('re-reads the subtree after a reconnection: what changed while disconnected shows, then events flow again', async () => {
    const { writer, client, cache, events, caughtUp } = await setUp(undefined, async (w) => {
      await w.create('/job/a', text('A'));
      await w.create('/job/gone', text('G'));
    });
    events.length = 0;
    await client.disconnect();
    await writer.setData('/job/a', text('changed while away'));
    await writer.remove('/job/gone');
    await writer.create('/job/new', text('N'));
    await client.reconnect();
    await caughtUp();
    expect(cache.get('/job/a')).toBe('changed while away');
    expect(cache.has('/job/gone')).toBe(false);
    expect(cache.get('/job/new')).toBe('N');
    expect(events.map((event) => `${event.type} ${event.path}`).sort()).toEqual([
      'ADDED /job/new',
      'DELETED /job/gone',
      'UPDATED /job/a',
    ]);
    // The watch is back on the new connection.
    await writer.setData('/job/new', text('N2'));
    await caughtUp();
    expect(cache.get('/job/new')).toBe('N2');
  });

  it('takes its own creates without reading them back, and reads when a peer created the node first', async () => {
    const { writer, client, cache, caughtUp } = await setUp();
    const reads = client.stats.reads;
    const created = client.create('/job/mine', text('mine'));
    cache.expectOwnCreates([{ path: '/job/mine', data: text('mine') }], created);
    await created;
    await caughtUp();
    expect(cache.get('/job/mine')).toBe('mine');
    expect(client.stats.reads).toBe(reads);
    // A peer's create lands just before ours: ours fails, and the NODE_CREATED we then hear is the peer's, so it is
    // read.
    const peer = writer.create('/job/raced', text('peer'));
    const lost = client.create('/job/raced', text('mine'));
    cache.expectOwnCreates([{ path: '/job/raced', data: text('mine') }], lost);
    await peer;
    await expect(lost).rejects.toMatchObject({ code: 'NODE_EXISTS' });
    await caughtUp();
    expect(cache.get('/job/raced')).toBe('peer');
    expect(client.stats.reads).toBe(reads + 1);
  });

  it('settled() with nothing outstanding answers without arming a timer', async () => {
    // A job's start-up asks about ten times, mostly with nothing outstanding (issue 43): no 30 s timer each time.
    const { writer, cache, caughtUp } = await setUp();
    await writer.create('/job/a', text('A'));
    await caughtUp();
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      await cache.settled();
      expect(timers).not.toHaveBeenCalled();
    } finally {
      timers.mockRestore();
    }
    expect(cache.get('/job/a')).toBe('A');
  });
});
