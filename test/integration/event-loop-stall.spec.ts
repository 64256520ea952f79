import { Logger } from '@nestjs/common';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ConnectionStateChange } from '../../lib/registry/registry.types.js';
import { SilenceMeter } from '../../lib/registry/silence-meter.js';
import { releaseAll } from '../support/resources.js';
import { eventually, startRegistry } from '../support/zk.js';

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
      const ours = (calls: unknown[][]): string[] => linesOfSession(calls, session);
      // Answered just now: the server heard us, and expires the session only a whole timeout after this.
      await registry.exists('/');
      // Past the watchdog's limit of 2/3 of the timeout counted from this answer, with 1/6 of it to spare before
      // the server's own limit.
      const stallMs = Math.floor((timeout * 2) / 3) + Math.floor(timeout / 12);
      busy(stallMs);
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

  it('a stall, then another while the ping sent after the first is answered: the connection stays', async () => {
    // request-limits.spec.ts under load: the check right after a stall excused it and pinged, and the next check,
    // on time, judged the whole silence since the last answer while that ping's answer was unread or on its way.
    const registry = await startRegistry({ sessionTimeoutMilliseconds: 6000 });
    const warnings = vi.spyOn(Logger.prototype, 'warn');
    const checks = vi.spyOn(SilenceMeter.prototype, 'check');
    const states: ConnectionStateChange['state'][] = [];
    const unsubscribe = registry.onStateChange((change) => states.push(change.state));
    try {
      const timeout = registry.sessionTimeoutMs;
      const period = Math.floor(timeout / 6); // the watchdog's (zookeeper-session.ts)
      const session = registry.getSessionId()!;
      const ours = (calls: unknown[][]): string[] => linesOfSession(calls, session);
      await registry.exists('/');
      // First stall: past half the timeout, so that the watchdog's check after it is late and a ping goes out
      // (nothing was sent for over a third of the timeout).
      busy(Math.floor(timeout / 2) + Math.floor(period / 2));
      // The overdue check runs in the next timers phase, before this timer (its expiry is earlier); this timer then
      // starts the second stall from the check phase, after the poll phase that ran right after that check: the
      // ping's answer, not back yet then, stays unread until after the check that follows.
      await new Promise<void>((resolve) =>
        setTimeout(() =>
          setImmediate(() => {
            // Second stall: past the next check's time but under twice its period (that check is not late enough to
            // be excused as a stall of its own), the two together past the watchdog's limit of 2/3 of the timeout.
            busy(period + Math.floor(period / 2));
            resolve();
          }),
        ),
      );
      // The check after the second stall has judged (or, before the silence meter, dropped the connection).
      const stallEnded = Date.now();
      await eventually(
        () => checks.mock.calls.some(([now]) => now >= stallEnded) || ours(warnings.mock.calls).length > 0,
        (judged) => judged,
        30_000,
        'a watchdog check after the second stall',
      );
      await registry.exists('/');
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

/** Our own event loop stalled: nothing else runs in this process for `ms`. */
function busy(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy
  }
}

/** The logged lines (a spy's calls) about this ZooKeeper session. */
function linesOfSession(calls: unknown[][], session: string): string[] {
  return calls.map((call) => String(call[0])).filter((log) => log.includes(`0x${session}`));
}
