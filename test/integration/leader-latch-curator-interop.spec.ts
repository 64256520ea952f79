import { afterEach, describe, expect, it } from 'vitest';
import { registryErrorCode } from '../../lib/errors/elastic-job.errors.js';
import { LeaderLatch, sortLatchChildren } from '../../lib/registry/leader-latch.js';
import { javaPeer as javaPeerArgs } from '../support/java.js';
import { LineProcess } from '../support/line-process.js';
import { eventually, startRegistry, uniqueNamespace, zkConnect } from '../support/zk.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

function javaPeer(namespace: string, latchPath: string, id: string): LineProcess {
  const peer = new LineProcess('java', javaPeerArgs('CuratorLatchPeer', [zkConnect(), namespace, latchPath, id]));
  cleanups.push(() => peer.kill('SIGKILL'));
  return peer;
}

describe('LeaderLatch', () => {
  it('sorts by the sequence after the last "latch-", as Curator does', () => {
    // Curator's order: by what follows the last "latch-", or the whole name when there is none (String.compareTo).
    const expected = [
      '_c_c-latch-0000000001',
      '_c_a-latch-0000000002',
      '_c_e-my-latch-x-latch-0000000003', // keyed after its first "latch-", it would sort last
      '0000000005', // no "latch-": by the whole name
      '_c_b-latch-0000000010',
      'foreign',
    ];
    const input = [
      '_c_b-latch-0000000010',
      'foreign',
      '_c_e-my-latch-x-latch-0000000003',
      '_c_a-latch-0000000002',
      '0000000005',
      '_c_c-latch-0000000001',
    ];
    // The input is in neither that order nor plain name order: only the sort by Curator's key gives `expected`.
    expect(input).not.toEqual(expected);
    expect([...input].sort()).not.toEqual(expected);
    expect(sortLatchChildren(input)).toEqual(expected);
    expect(sortLatchChildren([...input].reverse())).toEqual(expected);
  });

  it('elects exactly one of several Node participants and hands over on close', async () => {
    const registry = await startRegistry();
    cleanups.push(() => registry.close());
    const latches = [0, 1, 2].map((i) => new LeaderLatch(registry, '/job/leader/election/latch', `node-${i}`));
    for (const latch of latches) await latch.start();
    await eventually(
      () => latches.filter((l) => l.hasLeadership()).length,
      (n) => n === 1,
    );
    const first = latches.find((l) => l.hasLeadership())!;
    await first.close();
    expect(await registry.exists(first.nodePath ?? '/nope')).toBeUndefined();
    const rest = latches.filter((l) => l !== first);
    await eventually(
      () => rest.filter((l) => l.hasLeadership()).length,
      (n) => n === 1,
      10_000,
      'one new leader',
    );
    for (const latch of rest) await latch.close();
    expect(await registry.getChildren('/job/leader/election/latch')).toEqual([]);
  });

  it('closeWith(): the leader write and the latch release are one transaction, all or nothing', async () => {
    const registry = await startRegistry();
    cleanups.push(() => registry.close());
    const latchPath = '/job/leader/election/latch';
    const leaderPath = '/job/leader/election/instance';
    const first = new LeaderLatch(registry, latchPath, 'first');
    const second = new LeaderLatch(registry, latchPath, 'second');
    await first.start();
    expect(await first.await(5000)).toBe(true);
    await second.start();
    const firstNode = first.nodePath!;
    // One request: the leader node made and the latch released together.
    const writesBefore = registry.stats.writes;
    await first.closeWith([{ op: 'create', path: leaderPath, data: Buffer.from('first'), mode: 'EPHEMERAL' }]);
    expect(registry.stats.writes - writesBefore).toBe(1);
    expect(await registry.exists(firstNode)).toBeUndefined();
    expect((await registry.getData(leaderPath))?.data.toString()).toBe('first');
    expect(first.hasLeadership()).toBe(false);
    expect(await second.await(5000)).toBe(true);
    // A transaction failing on NODE_EXISTS changes nothing: the op before it is not applied, the latch stays held.
    const secondNode = second.nodePath!;
    const refused = await second
      .closeWith([
        { op: 'create', path: '/job/leader/election/other', data: Buffer.from(''), mode: 'EPHEMERAL' },
        { op: 'create', path: leaderPath, data: Buffer.from('second'), mode: 'EPHEMERAL' },
      ])
      .catch((error: unknown) => error);
    expect(registryErrorCode(refused)).toBe('NODE_EXISTS');
    expect(await registry.exists('/job/leader/election/other')).toBeUndefined();
    expect(await registry.exists(secondNode)).toBeDefined();
    expect(second.hasLeadership()).toBe(true);
    await second.close();
    expect(await registry.getChildren(latchPath)).toEqual([]);
  });

  it('await() is bounded', async () => {
    const registry = await startRegistry();
    cleanups.push(() => registry.close());
    const holder = new LeaderLatch(registry, '/l', 'holder');
    await holder.start();
    expect(await holder.await(5000)).toBe(true);
    const waiter = new LeaderLatch(registry, '/l', 'waiter');
    await waiter.start();
    const started = Date.now();
    expect(await waiter.await(300)).toBe(false);
    expect(Date.now() - started).toBeLessThan(5000);
    await waiter.close();
    await holder.close();
  });

  it('shares one latch with a Java Apache Curator LeaderLatch, handing leadership both ways', async () => {
    const namespace = uniqueNamespace('interop');
    const latchPath = '/job/leader/election/latch';
    const registry = await startRegistry({ namespace });
    cleanups.push(() => registry.close());

    const java1 = javaPeer(namespace, latchPath, 'java-1');
    await java1.waitForLine(/^LEADER java-1$/, 60_000);

    const node = new LeaderLatch(registry, latchPath, 'node-1');
    cleanups.push(() => node.close());
    await node.start();
    expect(node.hasLeadership()).toBe(false);
    const children = await registry.getChildren(latchPath);
    expect(children).toHaveLength(2);
    for (const child of children ?? []) expect(child).toMatch(/^_c_[0-9a-f-]{36}-latch-\d{10}$/);

    java1.send('participants');
    expect(await java1.waitForLine(/^PARTICIPANTS/)).toBe('PARTICIPANTS java-1* node-1');

    java1.send('close');
    await java1.waitForLine(/^CLOSED java-1$/);
    expect(await node.await(10_000)).toBe(true);

    const java2 = javaPeer(namespace, latchPath, 'java-2');
    await java2.waitForLine(/^STARTED java-2$/, 60_000);
    // Curator creates its node in the background after start(): ask until it is listed.
    const listing = await eventually(
      async () => {
        const from = java2.lines.length;
        java2.send('participants');
        return java2.waitForLine(/^PARTICIPANTS/, 5000, from);
      },
      (line) => line.includes('java-2'),
      20_000,
      'java-2 listed',
    );
    expect(listing).toBe('PARTICIPANTS node-1* java-2');
    expect(java2.lines).not.toContain('LEADER java-2');

    await node.close();
    await java2.waitForLine(/^LEADER java-2$/, 10_000);
    java2.send('close');
    await java2.waitForLine(/^CLOSED java-2$/);
  });
});
