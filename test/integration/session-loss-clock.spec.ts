import { Logger } from '@nestjs/common';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ConnectionStateChange } from '../../lib/registry/registry.types.js';
import type { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import { hold, observer, proxyTo, releaseAll } from '../support/resources.js';
import { startRegistry, uniqueNamespace } from '../support/zk.js';

/**
 * What a disconnected instance counts its session's loss from (lib/registry/reply-clock.ts): ZooKeeper's last answer
 * to one of its requests or pings. Not the moment it connected, and not the node events it keeps receiving while the
 * server no longer hears it. Each is read from the warning a disconnection logs ("the session is lost if not back
 * within N ms").
 */

const SESSION_TIMEOUT_MS = 4000;

afterEach(async () => {
  vi.restoreAllMocks();
  await releaseAll();
});

/** Every warning logged from here on, as text. */
function warnings(): string[] {
  const said: string[] = [];
  vi.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => {
    said.push(String(message));
  });
  return said;
}

/** The `remaining` of the disconnection warning logged since `from`; fails when none was. */
function lossWindowMs(said: readonly string[], from: number): number {
  const line = said.slice(from).find((text) => text.startsWith('disconnected from ZooKeeper'));
  expect(line, `no disconnection warning among: ${said.slice(from).join(' | ')}`).toBeDefined();
  return Number(/lost if not back within (\d+) ms/.exec(line!)?.[1]);
}

/** The next change of state to `state` (event-driven). */
function nextState(registry: ZookeeperRegistryCenter, state: ConnectionStateChange['state']) {
  return new Promise<ConnectionStateChange>((resolve) => {
    const off = registry.onStateChange((change) => {
      if (change.state !== state) return;
      off();
      resolve(change);
    });
  });
}

describe("the clock a lost session is counted from: ZooKeeper's last answer", () => {
  it('moves with every answer: a connection cut long after connecting is given the session back when restored', async () => {
    const proxy = await proxyTo();
    const registry = await startRegistry({
      namespace: uniqueNamespace('reply-clock'),
      serverLists: proxy.connectString,
      sessionTimeoutMilliseconds: SESSION_TIMEOUT_MS,
    });
    hold(() => registry.close());
    // Answered requests for longer than a session timeout after connecting: a clock that stayed at the connection's
    // start would count the session as already gone.
    const connectedAt = Date.now();
    while (Date.now() - connectedAt <= SESSION_TIMEOUT_MS * 1.5) await registry.exists('/');
    const said = warnings();
    const suspended = nextState(registry, 'SUSPENDED');
    proxy.cut();
    await suspended;
    // Counted from the last answer, a moment ago: most of a session timeout (0 when counted from the connection).
    expect(lossWindowMs(said, 0)).toBeGreaterThan(0);

    const lost: ConnectionStateChange[] = [];
    const offLost = registry.onStateChange((change) => change.state === 'LOST' && lost.push(change));
    hold(offLost);
    const back = nextState(registry, 'RECONNECTED');
    proxy.restore();
    expect(await back).toMatchObject({ state: 'RECONNECTED', newSession: false });
    expect(lost).toEqual([]);
  });

  it('does not move with node events: an instance the server no longer hears, still receiving them, counts its session lost when the server ends it', async () => {
    const namespace = uniqueNamespace('reply-clock-events');
    const proxy = await proxyTo();
    const listener = await startRegistry({
      namespace,
      serverLists: proxy.connectString,
      sessionTimeoutMilliseconds: SESSION_TIMEOUT_MS,
    });
    hold(() => listener.close());
    const writer = await observer(namespace);
    await writer.create('/ticks', Buffer.alloc(0));
    let events = 0;
    await listener.addPersistentRecursiveWatch('/ticks', () => events++);
    // A node event every few milliseconds for as long as the test runs.
    let writing = true;
    const writes = (async () => {
      for (let tick = 0; writing; tick++) await writer.setData('/ticks', Buffer.from(String(tick)));
    })();
    hold(async () => {
      writing = false;
      await writes;
    });
    await vi.waitFor(() => expect(events).toBeGreaterThan(10), { timeout: 30_000, interval: 20 });

    const said = warnings();
    const suspended = nextState(listener, 'SUSPENDED');
    const lost = nextState(listener, 'LOST');
    const eventsBefore = events;
    // The listener's pings and requests go nowhere; the events still reach it until the server expires its session
    // (a session timeout after its last ping) and closes the connection.
    proxy.deafen();
    await suspended;
    expect(events, 'node events kept arriving while the server did not hear the listener').toBeGreaterThan(
      eventsBefore,
    );
    // The server had already expired the session: its last answer came a whole session timeout ago, where the last
    // node event came a few milliseconds ago.
    expect(lossWindowMs(said, 0)).toBeLessThan(SESSION_TIMEOUT_MS / 2);
    expect(await lost).toMatchObject({ state: 'LOST' });
  });
});
