import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import { RegistryError } from '../../lib/errors/elastic-job.errors.js';
import { sortLatchChildren } from '../../lib/registry/leader-latch.js';
import { TreeCache, type TreeEvent } from '../../lib/registry/tree-cache.js';
import type { ConnectionStateChange } from '../../lib/registry/registry.types.js';
import { proxyTo, releaseAll } from '../support/resources.js';
import { eventually, killSession, startRegistry, uniqueNamespace, zkConnect } from '../support/zk.js';

/** The client's one-shot watcher manager (the same module instance the registry's client uses). */
const WatcherManager = createRequire(import.meta.url)('node-zookeeper-client/lib/WatcherManager.js') as {
  prototype: { emit(event: { type: number; path: string }): void };
};

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
  await releaseAll();
});

describe('ZookeeperRegistryCenter on a real server', () => {
  it('creates, reads, lists, transacts and removes with Buffers under the namespace', async () => {
    const registry = await startRegistry();
    cleanups.push(() => registry.close());
    await registry.createWithParents('/job/a/b', Buffer.from('hello'), 'PERSISTENT');
    expect((await registry.getData('/job/a/b'))?.data.toString()).toBe('hello');
    expect(await registry.getChildren('/job')).toEqual(['a']);
    await registry.transaction([
      { op: 'check', path: '/job' },
      { op: 'create', path: '/job/c', data: Buffer.from('x'), mode: 'PERSISTENT' },
      { op: 'setData', path: '/job/a/b', data: Buffer.from('bye') },
    ]);
    expect((await registry.getData('/job/c'))?.data.toString()).toBe('x');
    expect((await registry.getData('/job/a/b'))?.data.toString()).toBe('bye');
    // all or nothing
    await expect(
      registry.transaction([
        { op: 'create', path: '/job/d', data: Buffer.alloc(0), mode: 'PERSISTENT' },
        { op: 'remove', path: '/job/missing' },
      ]),
    ).rejects.toMatchObject({ code: 'NO_NODE' });
    expect(await registry.exists('/job/d')).toBeUndefined();
    await registry.removeRecursive('/job');
    expect(await registry.exists('/job')).toBeUndefined();
  });

  it('puts a digest ACL on created nodes so that other credentials cannot change them', async () => {
    const namespace = uniqueNamespace('acl');
    const owner = await startRegistry({ namespace, digest: 'alice:secret' });
    cleanups.push(() => owner.close());
    await owner.createWithParents('/job/node', Buffer.from('v'), 'PERSISTENT');
    // Nodes made in a multi carry the same ACL (the library writes its multi requests itself).
    await owner.transaction([{ op: 'create', path: '/job/multi', data: Buffer.from('v'), mode: 'PERSISTENT' }]);
    const stranger = await startRegistry({ namespace, digest: 'mallory:guess' });
    cleanups.push(() => stranger.close());
    await expect(stranger.setData('/job/node', Buffer.from('evil'))).rejects.toMatchObject({ code: 'NO_AUTH' });
    await expect(stranger.setData('/job/multi', Buffer.from('evil'))).rejects.toMatchObject({ code: 'NO_AUTH' });
    await owner.setData('/job/node', Buffer.from('ok'));
    await owner.setData('/job/multi', Buffer.from('ok'));
  });

  it('works under a chroot in the connection string: multi requests and persistent watches carry it', async () => {
    const outside = await startRegistry();
    cleanups.push(() => outside.close());
    await outside.ensurePath('/jail');
    const registry = await startRegistry({ serverLists: `${zkConnect()}/${outside.namespace}/jail`, namespace: 'ns' });
    cleanups.push(() => registry.close());
    await registry.ensurePath('/job');
    const cache = new TreeCache(registry, '/job');
    cleanups.push(() => cache.close());
    await cache.start();
    await registry.transaction([
      { op: 'check', path: '/job' },
      { op: 'create', path: '/job/a', data: Buffer.from('in'), mode: 'PERSISTENT' },
    ]);
    await outside.createWithParents('/jail/ns/job/b', Buffer.from('seen'), 'PERSISTENT');
    await eventually(
      () => [cache.get('/job/a'), cache.get('/job/b')],
      (v) => v[0] === 'in' && v[1] === 'seen',
      10_000,
      'cache under the chroot',
    );
    expect((await outside.getData('/jail/ns/job/a'))?.data.toString()).toBe('in');
  });

  it('protected sequential creates carry _c_{uuid}- and sort by sequence', async () => {
    const registry = await startRegistry();
    cleanups.push(() => registry.close());
    // At least four, and more until their random uuids put the names out of creation order: then sorting by name
    // cannot pass for sorting by sequence.
    const names: string[] = [];
    while (names.length < 4 || [...names].sort().every((name, i) => name === names[i])) {
      if (names.length >= 20) throw new Error(`20 random uuids in creation order: ${names.join(' ')}`);
      const path = await registry.createProtectedEphemeralSequential(
        '/latch',
        'latch-',
        Buffer.alloc(0),
        Date.now() + 5000,
      );
      expect(path).toMatch(/^\/latch\/_c_[0-9a-f-]{36}-latch-\d{10}$/);
      names.push(path.slice('/latch/'.length));
    }
    expect(new Set(names.map((name) => name.slice(0, 40))).size).toBe(names.length); // a uuid per create
    const sequences = names.map((name) => Number(name.slice(-10)));
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b)); // created in this order: rising sequences
    expect(sortLatchChildren((await registry.getChildren('/latch'))!)).toEqual(names);
    expect(sortLatchChildren([...names].reverse())).toEqual(names);
  });

  it('makes a missing latch directory a container, as Curator does: reaped by the server once empty, made again', async () => {
    const registry = await startRegistry();
    cleanups.push(() => registry.close());
    await registry.ensurePath('/job/leader/election');
    const latchDir = '/job/leader/election/latch';
    const participant = await registry.createProtectedEphemeralSequential(
      latchDir,
      'latch-',
      Buffer.alloc(0),
      Date.now() + 5000,
    );
    // (A client cannot see that a node is a container: ZooKeeper shows it an ephemeralOwner of 0. Its reaping is.)
    await expect(registry.createContainer(latchDir)).rejects.toMatchObject({ code: 'NODE_EXISTS' });
    await registry.remove(participant);
    // The test server looks for empty containers every second (LocalZookeeper's containerCheckIntervalMs).
    await eventually(
      () => registry.exists(latchDir),
      (stat) => stat === undefined,
      10_000,
      'the empty container reaped',
    );
    expect(await registry.exists('/job/leader/election')).toBeDefined(); // a persistent parent stays
    // Made again by the next participant, and a container again.
    const next = await registry.createProtectedEphemeralSequential(
      latchDir,
      'latch-',
      Buffer.alloc(0),
      Date.now() + 5000,
    );
    await registry.remove(next);
    await eventually(
      () => registry.exists(latchDir),
      (stat) => stat === undefined,
      10_000,
      'the container reaped again',
    );
  });

  it('goes SUSPENDED then RECONNECTED (same session) across a short cut, keeping its ephemeral nodes', async () => {
    const proxy = await proxyTo();
    const registry = await startRegistry({ serverLists: proxy.connectString });
    cleanups.push(() => registry.close());
    const states: ConnectionStateChange[] = [];
    registry.onStateChange((s) => states.push(s));
    await registry.createWithParents('/eph', Buffer.from('me'), 'EPHEMERAL');
    const session = registry.getSessionId();
    proxy.cut();
    await eventually(
      () => states.map((s) => s.state),
      (s) => s.includes('SUSPENDED'),
      5000,
      'SUSPENDED',
    );
    proxy.restore();
    await eventually(
      () => states.map((s) => s.state),
      (s) => s.includes('RECONNECTED'),
      10_000,
      'RECONNECTED',
    );
    expect(states.find((s) => s.state === 'RECONNECTED')?.newSession).toBe(false);
    expect(registry.getSessionId()).toBe(session);
    const eph = await registry.getData('/eph');
    expect(eph?.data.toString()).toBe('me');
    expect(eph?.stat.ephemeralOwner).toBe(session); // the same node, still owned by the kept session
  });

  it('after a forced session expiry: LOST, a new client and session, pending calls fail, new-session callbacks run', async () => {
    const proxy = await proxyTo();
    const registry = await startRegistry({ serverLists: proxy.connectString });
    cleanups.push(() => registry.close());
    const states: ConnectionStateChange[] = [];
    const order: string[] = [];
    registry.onStateChange((s) => {
      states.push(s);
      order.push(s.state);
    });
    let reRegistered = 0;
    registry.onNewSession(async () => {
      reRegistered++;
      order.push('new-session callback');
      await registry.createWithParents('/eph', Buffer.from('again'), 'EPHEMERAL');
    });
    await registry.createWithParents('/eph', Buffer.from('me'), 'EPHEMERAL');
    const credentials = registry.getSessionCredentials()!;
    const oldSession = registry.getSessionId();

    proxy.cut();
    await eventually(
      () => states.map((s) => s.state),
      (s) => s.includes('SUSPENDED'),
      5000,
      'SUSPENDED',
    );
    const pendingCall = registry.getData('/eph'); // queued on a client whose session is about to die
    await killSession(credentials);
    proxy.restore();

    await expect(pendingCall).rejects.toMatchObject({ code: 'SESSION_EXPIRED' });
    await eventually(
      () => states.map((s) => s.state),
      (s) => s.includes('RECONNECTED'),
      15_000,
      'RECONNECTED',
    );
    expect(states.map((s) => s.state)).toContain('LOST');
    expect(states.find((s) => s.state === 'RECONNECTED')?.newSession).toBe(true);
    expect(registry.getSessionId()).not.toBe(oldSession);
    expect(reRegistered).toBe(1);
    // RECONNECTED first, so caches re-add their watch before anyone re-registers from them.
    expect(order.slice(order.indexOf('LOST'))).toEqual(['LOST', 'RECONNECTED', 'new-session callback']);
    const eph = await registry.getData('/eph');
    expect(eph?.data.toString()).toBe('again');
    expect(eph?.stat.ephemeralOwner).toBe(registry.getSessionId());
  });

  it('declares the session lost on its own clock during a silent partition', async () => {
    const proxy = await proxyTo();
    const registry = await startRegistry({ serverLists: proxy.connectString, sessionTimeoutMilliseconds: 2000 });
    cleanups.push(() => registry.close());
    const states: string[] = [];
    registry.onStateChange((s) => states.push(s.state));
    proxy.freeze();
    await eventually(
      () => states,
      (s) => s.includes('LOST'),
      10_000,
      'LOST',
    );
    proxy.restore();
    await eventually(
      () => registry.isConnected(),
      (c) => c,
      15_000,
      'connected again',
    );
  });

  it('a persistent recursive watch hears every create, change and delete below its root, with no read to re-arm it', async () => {
    const namespace = uniqueNamespace('addwatch');
    const watching = await startRegistry({ namespace });
    const writer = await startRegistry({ namespace });
    cleanups.push(
      () => watching.close(),
      () => writer.close(),
    );
    const heard: string[] = [];
    await watching.addPersistentRecursiveWatch('/w', (e) => heard.push(`${e.type} ${e.path}`));
    const requestsBefore = { ...watching.stats };
    await writer.createWithParents('/w/a/b', Buffer.from('1'), 'PERSISTENT');
    await writer.setData('/w/a/b', Buffer.from('2'));
    await writer.setData('/w/a/b', Buffer.from('3'));
    await writer.createWithParents('/elsewhere', Buffer.alloc(0), 'PERSISTENT');
    await writer.remove('/w/a/b');
    const expected = [
      'NODE_CREATED /w',
      'NODE_CREATED /w/a',
      'NODE_CREATED /w/a/b',
      'NODE_DATA_CHANGED /w/a/b',
      'NODE_DATA_CHANGED /w/a/b',
      'NODE_DELETED /w/a/b',
    ];
    await eventually(
      () => heard,
      (h) => h.length >= expected.length,
      5000,
      'six events',
    );
    expect(heard).toEqual(expected);
    expect(watching.stats.reads - requestsBefore.reads).toBe(0);
    expect(watching.stats.watchRequests - requestsBefore.watchRequests).toBe(0);
    // The client survives the body-less answer: a plain request right after still works.
    expect(await watching.getChildren('/w')).toEqual(['a']);
  });

  it("one-shot watches fire once each beside persistent ones; the client's watcher manager sees only their paths", async () => {
    const namespace = uniqueNamespace('oneshot');
    // Bound by the registry when it starts: every notification handed to the client's one-shot watcher manager.
    const handedToClient = vi.spyOn(WatcherManager.prototype, 'emit');
    const watching = await startRegistry({ namespace });
    const writer = await startRegistry({ namespace });
    cleanups.push(
      () => watching.close(),
      () => writer.close(),
      () => handedToClient.mockRestore(),
    );
    await writer.createWithParents('/w/data', Buffer.from('1'), 'PERSISTENT');
    await writer.createWithParents('/w/dir', Buffer.alloc(0), 'PERSISTENT');
    const heard: string[] = [];
    await watching.addPersistentRecursiveWatch('/w', (e) => heard.push(`persistent ${e.type} ${e.path}`));
    await watching.getData('/w/data', (e) => heard.push(`data ${e.type} ${e.path}`));
    await watching.getChildren('/w/dir', (e) => heard.push(`children ${e.type} ${e.path}`));
    await watching.exists('/w/later', (e) => heard.push(`exists ${e.type} ${e.path}`));
    handedToClient.mockClear();
    for (let n = 0; n < 20; n++) await writer.createWithParents(`/w/other/${n}`, Buffer.alloc(0), 'PERSISTENT');
    await writer.setData('/w/data', Buffer.from('2'));
    await writer.setData('/w/data', Buffer.from('3')); // the data watch has fired: not again
    await writer.createWithParents('/w/dir/x', Buffer.alloc(0), 'PERSISTENT');
    await writer.createWithParents('/w/later', Buffer.alloc(0), 'PERSISTENT');
    await eventually(
      () => heard,
      (h) =>
        h.some((line) => line === 'persistent NODE_CREATED /w/later') && h.includes('exists NODE_CREATED /w/later'),
      5000,
      'the last create heard',
    );
    expect(heard.filter((line) => !line.startsWith('persistent'))).toEqual([
      'data NODE_DATA_CHANGED /w/data',
      'children NODE_CHILDREN_CHANGED /w/dir',
      'exists NODE_CREATED /w/later',
    ]);
    expect(heard.filter((line) => line.startsWith('persistent'))).toHaveLength(21 + 2 + 2);
    // The twenty creates under /w/other, and /w/data's second change, were not the client's business.
    const paths = handedToClient.mock.calls.map(([event]) => event.path);
    expect(paths).toEqual(['/w/data', '/w/dir', '/w/later'].map((path) => `/${namespace}${path}`));
  });
});

describe('TreeCache', () => {
  it('mirrors a subtree and emits ADDED / UPDATED / DELETED', async () => {
    const registry = await startRegistry();
    cleanups.push(() => registry.close());
    await registry.createWithParents('/job/config', Buffer.from('v1'), 'PERSISTENT');
    const cache = new TreeCache(registry, '/job');
    cleanups.push(() => cache.close());
    const events: TreeEvent[] = [];
    cache.listen((e) => events.push(e));
    await cache.start();
    expect(cache.get('/job/config')).toBe('v1');
    await registry.setData('/job/config', Buffer.from('v2'));
    await registry.createWithParents('/job/instances/a', Buffer.from('x'), 'EPHEMERAL');
    await eventually(
      () => [cache.get('/job/config'), cache.get('/job/instances/a')],
      (v) => v[0] === 'v2' && v[1] === 'x',
    );
    await registry.remove('/job/instances/a');
    await eventually(
      () => cache.has('/job/instances/a'),
      (h) => !h,
    );
    expect(events).toContainEqual({ type: 'UPDATED', path: '/job/config', data: 'v2' });
    expect(events).toContainEqual({ type: 'ADDED', path: '/job/instances/a', data: 'x' });
    expect(events).toContainEqual({ type: 'DELETED', path: '/job/instances/a', data: 'x' });
  });

  it('settled() waits for reads set off by a write of our own', async () => {
    const registry = await startRegistry();
    cleanups.push(() => registry.close());
    await registry.ensurePath('/job/sharding');
    const cache = new TreeCache(registry, '/job');
    cleanups.push(() => cache.close());
    await cache.start();
    await registry.transaction([
      { op: 'create', path: '/job/sharding/0', data: Buffer.alloc(0), mode: 'PERSISTENT' },
      { op: 'create', path: '/job/sharding/0/instance', data: Buffer.from('me'), mode: 'PERSISTENT' },
    ]);
    await cache.settled();
    expect(cache.get('/job/sharding/0/instance')).toBe('me');
  });

  it('follows our own creates without reading them, and reads what others write', async () => {
    const registry = await startRegistry();
    cleanups.push(() => registry.close());
    await registry.ensurePath('/job/sharding/0');
    const shape = (path: string) =>
      path === '/job/sharding/0/running' || path === '/job/other'
        ? { data: true, children: false }
        : { data: false, children: true };
    const cache = new TreeCache(registry, '/job', 'test', shape);
    cleanups.push(() => cache.close());
    await cache.start();
    const before = registry.stats.reads;
    for (let firing = 0; firing < 5; firing++) {
      const ops = [
        {
          op: 'create' as const,
          path: '/job/sharding/0/running',
          data: Buffer.from(`me-${firing}`),
          mode: 'EPHEMERAL' as const,
        },
      ];
      const write = registry.transaction(ops);
      cache.expectOwnCreates(ops, write);
      await write;
      await cache.settled();
      expect(cache.get('/job/sharding/0/running')).toBe(`me-${firing}`);
      await registry.transaction([{ op: 'remove', path: '/job/sharding/0/running' }]);
      await cache.settled();
      expect(cache.has('/job/sharding/0/running')).toBe(false);
    }
    await registry.createWithParents('/job/sharding/1', Buffer.alloc(0), 'PERSISTENT'); // a directory: announced, not read
    await cache.settled();
    expect(cache.children('/job/sharding').sort()).toEqual(['0', '1']);
    expect(registry.stats.reads - before).toBe(0);
    await registry.createWithParents('/job/other', Buffer.from('theirs'), 'PERSISTENT'); // not announced as ours: read
    await cache.settled();
    expect(cache.get('/job/other')).toBe('theirs');
    expect(registry.stats.reads - before).toBe(1);
  });

  it('loads a tree with the reads its shape needs: no read for the existence of a listed node', async () => {
    const registry = await startRegistry();
    cleanups.push(() => registry.close());
    await registry.createWithParents('/job/dir/flag', Buffer.alloc(0), 'PERSISTENT');
    await registry.createWithParents('/job/leaf', Buffer.from('v'), 'PERSISTENT');
    const shapes: Record<string, { data: boolean; children: boolean }> = {
      '/job': { data: true, children: true },
      '/job/dir': { data: false, children: true },
      '/job/dir/flag': { data: false, children: false },
      '/job/leaf': { data: true, children: false },
    };
    const cache = new TreeCache(registry, '/job', 'test', (path) => shapes[path] ?? 'ignore');
    cleanups.push(() => cache.close());
    const before = registry.stats.reads;
    await cache.start();
    expect(cache.has('/job/dir/flag')).toBe(true);
    expect(cache.get('/job/leaf')).toBe('v');
    // /job's data and children in one multiRead; /job/dir's children and /job/leaf's data in a second. Nothing for
    // /job/dir/flag (a read of it, known only from /job/dir's children, would be a third request).
    expect(registry.stats.reads - before).toBe(2);
  });

  it("lazy nodes: a peer's node is announced without a read, and read only when asked for", async () => {
    const namespace = uniqueNamespace('lazy');
    const registry = await startRegistry({ namespace });
    const peer = await startRegistry({ namespace });
    cleanups.push(
      () => registry.close(),
      () => peer.close(),
    );
    await registry.ensurePath('/job/sharding/0');
    const shape = (path: string) =>
      path.endsWith('/running') ? { data: 'lazy' as const, children: false } : { data: false, children: true };
    const cache = new TreeCache(registry, '/job', 'test', shape);
    cleanups.push(() => cache.close());
    const events: TreeEvent[] = [];
    cache.listen((e) => events.push(e));
    await cache.start();
    const before = registry.stats.reads;
    for (let firing = 0; firing < 3; firing++) {
      await peer.createWithParents('/job/sharding/0/running', Buffer.from('peer'), 'EPHEMERAL');
      await eventually(
        () => cache.has('/job/sharding/0/running'),
        (h) => h,
        5000,
        'announced',
      );
      expect(cache.isUnread('/job/sharding/0/running')).toBe(true);
      await peer.remove('/job/sharding/0/running');
      await eventually(
        () => cache.has('/job/sharding/0/running'),
        (h) => !h,
        5000,
        'gone',
      );
    }
    expect(registry.stats.reads - before).toBe(0);
    await peer.createWithParents('/job/sharding/0/running', Buffer.from('peer'), 'EPHEMERAL');
    await eventually(
      () => cache.has('/job/sharding/0/running'),
      (h) => h,
      5000,
      'announced',
    );
    await cache.readUnread(['/job/sharding/0/running', '/job/sharding/0']);
    expect(cache.get('/job/sharding/0/running')).toBe('peer');
    expect(registry.stats.reads - before).toBe(1);
    expect(events).toContainEqual({ type: 'UPDATED', path: '/job/sharding/0/running', data: 'peer' });
  });

  it('re-syncs after a reconnection: changes made while cut off arrive as events, and later ones keep arriving', async () => {
    const proxy = await proxyTo();
    const namespace = uniqueNamespace('resync');
    const registry = await startRegistry({
      namespace,
      serverLists: proxy.connectString,
      sessionTimeoutMilliseconds: 10_000,
    });
    const writer = await startRegistry({ namespace });
    cleanups.push(
      () => registry.close(),
      () => writer.close(),
    );
    await writer.createWithParents('/job/config', Buffer.from('v1'), 'PERSISTENT');
    await writer.createWithParents('/job/gone', Buffer.from('x'), 'PERSISTENT');
    const cache = new TreeCache(registry, '/job');
    cleanups.push(() => cache.close());
    const events: TreeEvent[] = [];
    cache.listen((e) => events.push(e));
    await cache.start();
    const states: string[] = [];
    registry.onStateChange((s) => states.push(s.state));
    proxy.cut();
    await eventually(
      () => states,
      (s) => s.includes('SUSPENDED'),
      5000,
      'SUSPENDED',
    );
    await writer.setData('/job/config', Buffer.from('v2'));
    await writer.remove('/job/gone');
    await writer.createWithParents('/job/new', Buffer.from('n'), 'PERSISTENT');
    proxy.restore();
    await eventually(
      () => [cache.get('/job/config'), cache.has('/job/gone'), cache.get('/job/new')],
      (v) => v[0] === 'v2' && !v[1] && v[2] === 'n',
      15_000,
      'caught up',
    );
    expect(events).toContainEqual({ type: 'UPDATED', path: '/job/config', data: 'v2' });
    expect(events).toContainEqual({ type: 'DELETED', path: '/job/gone', data: 'x' });
    expect(events).toContainEqual({ type: 'ADDED', path: '/job/new', data: 'n' });
    // The watch was added again on the new connection: a change made now is heard too.
    await writer.setData('/job/config', Buffer.from('v3'));
    await eventually(
      () => cache.get('/job/config'),
      (v) => v === 'v3',
      5000,
      'v3 heard after the reconnection',
    );
  });
});

describe('ZookeeperRegistryCenter without a server', () => {
  it('start() resolves false after the connection timeout instead of throwing', async () => {
    const registry = new ZookeeperRegistryCenter({
      serverLists: '127.0.0.1:1',
      namespace: 'none',
      connectionTimeoutMilliseconds: 500,
    });
    expect(await registry.start()).toBe(false);
    const pending = registry.getData('/x').catch((error: unknown) => error);
    await registry.close();
    expect(await pending).toBeInstanceOf(RegistryError);
  });
});
