import { Logger } from '@nestjs/common';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RegistryError } from '../../lib/errors/elastic-job.errors.js';
import type { ReadAnswer, ReadRequest } from '../../lib/registry/registry.types.js';
import { TreeCache } from '../../lib/registry/tree-cache.js';
import { FakeRegistryCenter, FakeZookeeper } from '../support/fake-registry.js';

/**
 * A cache closed while its steps wait behind a read in flight (commit 0cff05c). The queued steps are skipped at the
 * close, so nothing awaits their reads any more; those reads fail after the close (the registry center is closed
 * by then, as when an app shuts down). A read nobody awaits that fails is an unhandled rejection, which fails a
 * vitest run and crashes a host app run with Node's default `--unhandled-rejections=throw`.
 *
 * On the fake registry a read answers (or fails) by itself a tick later, before a close can come between; here
 * the test holds the reads (`HeldReads`) and lets them go once the cache is closed.
 */

beforeAll(() => {
  Logger.overrideLogger(['error']);
});

/** A read held until the test settles it. */
interface HeldRead {
  reads: readonly ReadRequest[];
  settle: (outcome: 'answer' | 'fail') => void;
}

/** The fake client, except that its reads wait for the test while `holding` is on. */
class HeldReads extends FakeRegistryCenter {
  holding = false;
  readonly heldReads: HeldRead[] = [];

  override readMany(reads: readonly ReadRequest[]): Promise<ReadAnswer[]> {
    if (!this.holding) return super.readMany(reads);
    return new Promise<ReadAnswer[]>((resolve, reject) => {
      this.heldReads.push({
        reads,
        settle: (outcome) =>
          outcome === 'answer'
            ? resolve(super.readMany(reads))
            : reject(new RegistryError('CLOSED', reads[0]?.path, 'ZooKeeper registry center is closed')),
      });
    });
  }
}

/** Unhandled rejections while `run` goes on, and until Node has reported the ones its last turn left. */
async function unhandledDuring(run: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const listener = (reason: unknown): void => void seen.push(reason);
  process.on('unhandledRejection', listener);
  try {
    await run();
    // Node reports a rejection left unhandled once the microtasks of the turn it happened in have run.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('unhandledRejection', listener);
  }
  return seen;
}

const caches: TreeCache[] = [];
afterEach(() => {
  for (const cache of caches.splice(0)) cache.close();
});

async function setUp() {
  const zk = new FakeZookeeper();
  const writer = await zk.connect('ns');
  const client = new HeldReads(zk, 'ns');
  await client.start();
  await writer.create('/job', Buffer.from('root'));
  const cache = new TreeCache(client, '/job', 'test');
  caches.push(cache);
  await cache.start();
  return { zk, writer, client, cache };
}

/** Resolves once `count` reads are held. */
async function heldReads(zk: FakeZookeeper, client: HeldReads, count: number): Promise<HeldRead[]> {
  while (client.heldReads.length < count) await zk.idle();
  return client.heldReads;
}

describe('TreeCache closed with steps queued behind a read in flight', () => {
  it("a node's read that fails after the close is handled, its step skipped", async () => {
    const { zk, writer, client, cache } = await setUp();
    client.holding = true;
    // Two nodes appear: the first's step waits for its read, the second's is queued behind it with its own read.
    await writer.create('/job/a', Buffer.from('A'));
    await writer.create('/job/b', Buffer.from('B'));
    const [first, second] = await heldReads(zk, client, 2);
    expect([first!.reads[0]!.path, second!.reads[0]!.path]).toEqual(['/job/a', '/job/b']);
    const unhandled = await unhandledDuring(async () => {
      cache.close();
      await client.close();
      // The first step ends, the queue skips the second (closed), and then the second's read fails.
      first!.settle('fail');
      await new Promise((resolve) => setImmediate(resolve));
      second!.settle('fail');
    });
    expect(unhandled).toEqual([]);
    expect(cache.paths()).toEqual([]);
  });

  it('a re-sync whose reads fail after the close is handled, its snapshot step skipped', async () => {
    const { zk, writer, client, cache } = await setUp();
    await writer.create('/job/a', Buffer.from('A'));
    await cache.settled();
    client.holding = true;
    // A step waits for its read; then a reconnection queues the re-sync's snapshot behind it.
    await writer.setData('/job/a', Buffer.from('A2'));
    const [change] = await heldReads(zk, client, 1);
    await client.disconnect();
    await client.reconnect();
    // The re-sync reads the root's children and data (held too) once its watch is back.
    const held = await heldReads(zk, client, 2);
    const resyncReads = held.slice(1);
    const unhandled = await unhandledDuring(async () => {
      cache.close();
      await client.close();
      change!.settle('fail');
      await new Promise((resolve) => setImmediate(resolve));
      for (const read of resyncReads) read.settle('fail');
    });
    expect(unhandled).toEqual([]);
  });
});
