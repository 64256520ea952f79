import { Logger } from '@nestjs/common';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ConnectionStateChange } from '../../lib/registry/registry.types.js';
import { releaseAll } from '../support/resources.js';
import { startRegistry } from '../support/zk.js';

/**
 * A process that does not run for a while (a long synchronous stretch, a host too busy to schedule it) has not
 * heard ZooKeeper meanwhile, but ZooKeeper did answer: its bytes wait in the socket until the loop reads them. The
 * liveness watchdog (zookeeper-session.ts) must not take our own stall for a silent partition.
 */

afterEach(async () => {
  await releaseAll();
  vi.restoreAllMocks();
});

describe('a stall of our own event loop', () => {
  it('shorter than the session timeout but longer than the watchdog limit: the connection and the session stay', async () => {
    // A timeout long enough that a loaded host's scheduling delays (the answer read late, the next request sent
    // late) stay well inside what the server allows after the stall: it expires a session a whole timeout after it
    // last heard from us, and the stall must take most of that to pass the watchdog's limit.
    const registry = await startRegistry({ sessionTimeoutMilliseconds: 6000 });
    const warnings = vi.spyOn(Logger.prototype, 'warn');
    const debugs = vi.spyOn(Logger.prototype, 'debug');
    const states: ConnectionStateChange['state'][] = [];
    const unsubscribe = registry.onStateChange((change) => states.push(change.state));
    try {
      const timeout = registry.sessionTimeoutMs;
      // Ours only: a worker runs test files one after another in one process, and a stall starves every session in
      // it; another one's lines (a CI run once saw a 4 s session of another file lost here) say nothing of ours.
      const session = registry.getSessionId()!;
      const ours = (calls: unknown[][]): string[] =>
        calls.map((call) => String(call[0])).filter((log) => log.includes(`0x${session}`));
      // Answered just now: the server heard us, and expires the session only a whole timeout after this.
      await registry.exists('/');
      // Past the watchdog's limit of 2/3 of the timeout counted from this answer, with 1/6 of it to spare before
      // the server's own limit.
      const stallMs = Math.floor((timeout * 2) / 3) + Math.floor(timeout / 12);
      const until = Date.now() + stallMs;
      while (Date.now() < until) {
        // busy: nothing else runs in this process
      }
      // The first checks after the stall have run once a request made after it is answered and a watchdog
      // period (timeout / 6) has passed twice.
      await registry.exists('/');
      await new Promise((resolve) => setTimeout(resolve, timeout / 3));
      await registry.exists('/');
      // The watchdog did see the silence, and took it for ours.
      expect(ours(debugs.mock.calls).some((log) => /did not run for/.test(log))).toBe(true);
      expect(ours(warnings.mock.calls).filter((log) => /nothing received|disconnected|lost/.test(log))).toEqual([]);
      expect(states).toEqual([]);
      expect(registry.isConnected()).toBe(true);
      expect(registry.getSessionId()).toBe(session);
    } finally {
      unsubscribe();
      await registry.close();
    }
  });
});
