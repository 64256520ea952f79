import { afterEach, describe, expect, it, vi } from 'vitest';
import { registryErrorCode } from '../../lib/errors/elastic-job.errors.js';
import type { ConnectionStateChange, TransactionOp, WatchEvent } from '../../lib/registry/registry.types.js';
import { FakeZookeeper } from '../support/fake-registry.js';

// The fake is what the kernel's unit tests trust in place of ZooKeeper: its own rules are checked here.

const text = (value: string): Buffer => Buffer.from(value, 'utf8');

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    return registryErrorCode(error) ?? String(error);
  }
  return undefined;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('FakeZookeeper nodes', () => {
  it("answers with ZooKeeper's error codes", async () => {
    const zk = new FakeZookeeper();
    const client = await zk.connect('ns');
    expect(await codeOf(client.create('/a/b', text('')))).toBe('NO_NODE');
    await client.create('/a', text('1'));
    expect(await codeOf(client.create('/a', text('')))).toBe('NODE_EXISTS');
    await client.create('/a/b', text(''));
    expect(await codeOf(client.removeRecursive('/missing'))).toBeUndefined();
    expect(await codeOf(client.remove('/a'))).toBe('NOT_EMPTY');
    expect(await codeOf(client.setData('/nope', text('')))).toBe('NO_NODE');
    expect(await codeOf(client.transaction([{ op: 'check', path: '/a', version: 7 }]))).toBe('BAD_VERSION');
    await client.create('/e', text(''), 'EPHEMERAL');
    expect(await codeOf(client.create('/e/child', text('')))).toBe('NO_CHILDREN_FOR_EPHEMERALS');
    expect(await client.getData('/nope')).toBeUndefined();
    expect(zk.get('/ns/a')?.data).toBe('1');
  });

  it('keeps versions, cversion, mtime from the (fake) clock, and the owner of ephemerals', async () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00.000Z') });
    const zk = new FakeZookeeper();
    const client = await zk.connect('ns');
    await client.create('/a', text('x'));
    vi.setSystemTime(new Date('2026-01-01T00:00:05.000Z'));
    const stat = await client.setData('/a', text('y'));
    expect(stat).toMatchObject({
      version: 1,
      mtime: Date.parse('2026-01-01T00:00:05.000Z'),
      ephemeralOwner: '0000000000000000',
    });
    await client.create('/a/e', text(''), 'EPHEMERAL');
    expect(await client.exists('/a')).toMatchObject({ cversion: 1, numChildren: 1 });
    expect((await client.exists('/a/e'))?.ephemeralOwner).toBe(client.getSessionId());
    expect((await client.getData('/a'))!.stat.mzxid).toBeLessThan((await client.getData('/a/e'))!.stat.mzxid);
  });

  it("names sequential nodes after the parent's cversion, protected ones `_c_{uuid}-{name}{seq}`", async () => {
    const zk = new FakeZookeeper();
    const client = await zk.connect('ns');
    await client.create('/q', text(''));
    expect(await client.create('/q/n-', text(''), 'PERSISTENT_SEQUENTIAL')).toBe('/q/n-0000000000');
    await client.create('/q/n-', text(''), 'PERSISTENT_SEQUENTIAL');
    await client.remove('/q/n-0000000001');
    // A deleted child's number is never given again.
    expect(await client.create('/q/n-', text(''), 'PERSISTENT_SEQUENTIAL')).toBe('/q/n-0000000003');
    const protectedPath = await client.createProtectedEphemeralSequential(
      '/latch',
      'latch-',
      text('id'),
      Date.now() + 1000,
    );
    expect(protectedPath).toMatch(/^\/latch\/_c_[0-9a-f-]{36}-latch-0000000000$/);
    expect(zk.get(`/ns${protectedPath}`)?.stat.ephemeralOwner).toBe(client.getSessionId());
  });

  it('applies a transaction all or nothing, versions checked, and tells nothing of a failed one', async () => {
    const zk = new FakeZookeeper();
    const client = await zk.connect('ns');
    const observer = await zk.connect('ns');
    await client.create('/v', text('0'));
    const heard: WatchEvent[] = [];
    await observer.addPersistentRecursiveWatch('/', (event) => heard.push(event));
    const ops: TransactionOp[] = [
      { op: 'create', path: '/t', data: text(''), mode: 'PERSISTENT' },
      { op: 'create', path: '/t/child', data: text(''), mode: 'PERSISTENT' },
      { op: 'setData', path: '/v', data: text('1'), version: 5 },
    ];
    expect(await codeOf(client.transaction(ops))).toBe('BAD_VERSION');
    await zk.idle();
    expect(zk.paths('/ns')).toEqual(['/ns', '/ns/v']);
    expect(heard).toEqual([]);
    await client.transaction([...ops.slice(0, 2), { op: 'setData', path: '/v', data: text('1'), version: 0 }]);
    expect(zk.paths('/ns')).toEqual(['/ns', '/ns/t', '/ns/t/child', '/ns/v']);
    expect(zk.get('/ns/t')!.stat.mzxid).toBe(zk.get('/ns/v')!.stat.mzxid); // one transaction, one zxid
  });

  it('cuts ops into multi batches with the real request limits', async () => {
    const zk = new FakeZookeeper();
    const client = await zk.connect('ns');
    const ops: TransactionOp[] = Array.from({ length: 2500 }, (_, i) => ({ op: 'check', path: `/n${i}` }));
    expect(client.multiBatches(ops).map((batch) => batch.length)).toEqual([1000, 1000, 500]);
    const big: TransactionOp[] = Array.from({ length: 5 }, (_, i) => ({
      op: 'create',
      path: `/b${i}`,
      data: Buffer.alloc(200_000),
      mode: 'PERSISTENT',
    }));
    expect(await codeOf(client.transaction(big))).toBe('REQUEST_TOO_LARGE');
  });
});

describe('FakeZookeeper watches', () => {
  it('fires a one-shot watch once, after the writing call, before the writer hears its answer', async () => {
    const zk = new FakeZookeeper();
    const client = await zk.connect('ns');
    await client.create('/w', text(''));
    const order: string[] = [];
    await client.getData('/w', (event) => order.push(`watch ${event.type} ${event.path}`));
    const write = client.setData('/w', text('1')).then(() => order.push('answer'));
    order.push('call returned');
    await write;
    await client.setData('/w', text('2'));
    await zk.idle();
    expect(order).toEqual(['call returned', 'watch NODE_DATA_CHANGED /w', 'answer']);
  });

  it('tells children changes to child watches only, and a persistent recursive watch everything else below it', async () => {
    const zk = new FakeZookeeper();
    const writer = await zk.connect('ns');
    const reader = await zk.connect('ns');
    await writer.create('/r', text(''));
    const children: WatchEvent[] = [];
    const recursive: WatchEvent[] = [];
    await reader.getChildren('/r', (event) => children.push(event));
    await reader.addPersistentRecursiveWatch('/r', (event) => recursive.push(event));
    await writer.create('/r/a', text(''));
    await writer.create('/r/a/b', text(''));
    await writer.setData('/r/a/b', text('x'));
    await writer.removeRecursive('/r/a');
    await writer.create('/other', text(''));
    await zk.idle();
    expect(children).toEqual([{ type: 'NODE_CHILDREN_CHANGED', path: '/r' }]);
    expect(recursive).toEqual([
      { type: 'NODE_CREATED', path: '/r/a' },
      { type: 'NODE_CREATED', path: '/r/a/b' },
      { type: 'NODE_DATA_CHANGED', path: '/r/a/b' },
      { type: 'NODE_DELETED', path: '/r/a/b' },
      { type: 'NODE_DELETED', path: '/r/a' },
    ]);
    expect(reader.stats).toMatchObject({ reads: 1, writes: 1, watchRequests: 1, watchEvents: 6 });
  });
});

describe('FakeZookeeper connection control', () => {
  it('disconnect: requests fail, persistent watches end; reconnect: same session, one-shot watches told what they missed', async () => {
    const zk = new FakeZookeeper();
    const writer = await zk.connect('ns');
    const client = await zk.connect('ns');
    const states: ConnectionStateChange[] = [];
    client.onStateChange((change) => states.push(change));
    await writer.create('/d', text(''));
    const oneShot: WatchEvent[] = [];
    const recursive: WatchEvent[] = [];
    await client.exists('/d', (event) => oneShot.push(event));
    await client.addPersistentRecursiveWatch('/', (event) => recursive.push(event));
    const session = client.getSessionId();
    await client.disconnect();
    expect(client.isConnected()).toBe(false);
    expect(await codeOf(client.getData('/d'))).toBe('CONNECTION_LOSS');
    await writer.setData('/d', text('while away'));
    await client.reconnect();
    await writer.create('/after', text(''));
    await zk.idle();
    expect(states).toEqual([
      { state: 'SUSPENDED', newSession: false },
      { state: 'RECONNECTED', newSession: false },
    ]);
    expect(client.getSessionId()).toBe(session);
    expect(oneShot).toEqual([{ type: 'NODE_DATA_CHANGED', path: '/d' }]);
    // The one-shot notification passes the persistent watchers too (the library's tap); /after is not heard.
    expect(recursive).toEqual([{ type: 'NODE_DATA_CHANGED', path: '/d' }]);
    await client.addPersistentRecursiveWatch('/', (event) => recursive.push(event));
    await writer.setData('/after', text('1'));
    await zk.idle();
    expect(recursive.at(-1)).toEqual({ type: 'NODE_DATA_CHANGED', path: '/after' });
  });

  it('loses an answer in flight when the connection drops', async () => {
    const zk = new FakeZookeeper();
    const client = await zk.connect('ns');
    const write = client.create('/lost', text(''));
    void client.disconnect();
    expect(await codeOf(write)).toBe('CONNECTION_LOSS');
    expect(zk.get('/ns/lost')).toBeDefined(); // the write itself happened
  });

  it('expire: ephemerals go (others hear it), LOST, a new session, RECONNECTED (new), then the new-session callbacks', async () => {
    const zk = new FakeZookeeper();
    const client = await zk.connect('ns');
    const peer = await zk.connect('ns');
    await client.create('/eph', text(''), 'EPHEMERAL');
    const peerHeard: WatchEvent[] = [];
    await peer.exists('/eph', (event) => peerHeard.push(event));
    const order: string[] = [];
    client.onStateChange((change) => order.push(`${change.state}${change.newSession ? ' (new)' : ''}`));
    client.onNewSession(() => {
      order.push(`callback, connected ${client.isConnected()}`);
    });
    const old = client.getSessionId();
    await client.expire();
    await zk.idle();
    expect(order).toEqual(['SUSPENDED', 'LOST', 'RECONNECTED (new)', 'callback, connected true']);
    expect(client.getSessionId()).not.toBe(old);
    expect(zk.get('/ns/eph')).toBeUndefined();
    expect(peerHeard).toEqual([{ type: 'NODE_DELETED', path: '/eph' }]);
    expect(zk.liveSessions()).not.toContain(old);
  });

  it('expires a session left disconnected for the session timeout (fake timers)', async () => {
    vi.useFakeTimers();
    const zk = new FakeZookeeper();
    const client = await zk.connect('ns', { sessionTimeoutMs: 4000 });
    await client.create('/eph', text(''), 'EPHEMERAL');
    const states: string[] = [];
    client.onStateChange((change) => states.push(change.state));
    await client.disconnect();
    await vi.advanceTimersByTimeAsync(3999);
    expect(zk.get('/ns/eph')).toBeDefined();
    await vi.advanceTimersByTimeAsync(1);
    await zk.idle();
    expect(states).toEqual(['SUSPENDED', 'LOST', 'RECONNECTED']);
    expect(zk.get('/ns/eph')).toBeUndefined();
  });

  it('close: ephemerals go at once, requests fail with CLOSED', async () => {
    const zk = new FakeZookeeper();
    const client = await zk.connect('ns');
    await client.create('/eph', text(''), 'EPHEMERAL');
    await client.close();
    expect(zk.get('/ns/eph')).toBeUndefined();
    expect(await codeOf(client.getData('/eph'))).toBe('CLOSED');
    expect(await client.waitForConnection(1000)).toBe(false);
  });
});
