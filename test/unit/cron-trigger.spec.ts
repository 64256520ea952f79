import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CronTrigger } from '../../lib/schedule/cron-trigger.js';

/** Each firing: the instant it was for, and the (fake) time it came. */
interface Firing {
  at: string;
  calledAt: string;
}

const triggers: CronTrigger[] = [];

function trigger(cron: string, timeZone: string | undefined, leadMs = 0): { trigger: CronTrigger; firings: Firing[] } {
  const firings: Firing[] = [];
  const created = new CronTrigger(
    cron,
    timeZone,
    (at) => firings.push({ at: at.toISOString(), calledAt: new Date().toISOString() }),
    () => leadMs,
  );
  triggers.push(created);
  return { trigger: created, firings };
}

beforeEach(() => {
  vi.useFakeTimers({ now: new Date('2026-01-01T00:00:03.000Z') });
});

afterEach(() => {
  for (const created of triggers.splice(0)) created.stop();
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe('CronTrigger with fake timers', () => {
  it('fires for each instant, the prepare-ahead lead before it', async () => {
    const { trigger: cron, firings } = trigger('*/10 * * * * *', undefined, 25);
    cron.start();
    await vi.advanceTimersByTimeAsync(6_974); // 00:00:09.974
    expect(firings).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(firings).toEqual([{ at: '2026-01-01T00:00:10.000Z', calledAt: '2026-01-01T00:00:09.975Z' }]);
    await vi.advanceTimersByTimeAsync(20_025); // 00:00:30.000
    expect(firings.map((firing) => firing.calledAt)).toEqual([
      '2026-01-01T00:00:09.975Z',
      '2026-01-01T00:00:19.975Z',
      '2026-01-01T00:00:29.975Z',
    ]);
    expect(cron.nextFireTime()?.toISOString()).toBe('2026-01-01T00:00:40.000Z');
  });

  it('asks for its lead at each instant, and never leads by more than half the time from the instant before', async () => {
    let leadMs = 25;
    const firings: Firing[] = [];
    const cron = new CronTrigger(
      '* * * * * *',
      undefined,
      (at) => firings.push({ at: at.toISOString(), calledAt: new Date().toISOString() }),
      () => leadMs,
    );
    triggers.push(cron);
    cron.start(); // 00:00:03.000
    await vi.advanceTimersByTimeAsync(1_000);
    expect(firings.at(-1)).toEqual({ at: '2026-01-01T00:00:04.000Z', calledAt: '2026-01-01T00:00:03.975Z' });
    leadMs = 300; // a burst was slow to prepare: the lead grew (schedule/preparation-lead.ts)
    await vi.advanceTimersByTimeAsync(1_000);
    // 00:00:05.000 was armed at 00:00:04.000 with the old lead; the instant after gets the new one.
    expect(firings.at(-1)).toEqual({ at: '2026-01-01T00:00:05.000Z', calledAt: '2026-01-01T00:00:04.975Z' });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(firings.at(-1)).toEqual({ at: '2026-01-01T00:00:06.000Z', calledAt: '2026-01-01T00:00:05.700Z' });
    leadMs = 900; // more than half of a one-second cron: half a second, so the previous firing is over first
    await vi.advanceTimersByTimeAsync(2_000);
    expect(firings.at(-1)).toEqual({ at: '2026-01-01T00:00:08.000Z', calledAt: '2026-01-01T00:00:07.500Z' });
  });

  it('reschedule replaces the pending instant with the new cron, from now', async () => {
    vi.setSystemTime(new Date('2026-01-01T00:00:00.500Z'));
    const { trigger: cron, firings } = trigger('* * * * * *', undefined);
    cron.start();
    cron.reschedule('*/10 * * * * *', undefined);
    await vi.advanceTimersByTimeAsync(15_000);
    expect(firings.map((firing) => firing.at)).toEqual(['2026-01-01T00:00:10.000Z']);
    // Stopped, a reschedule only records the cron: nothing fires until started again.
    cron.stop();
    cron.reschedule('* * * * * *', undefined);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(firings).toHaveLength(1);
    expect(cron.isRunning).toBe(false);
    cron.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(firings.map((firing) => firing.at).at(-1)).toBe('2026-01-01T00:00:21.000Z');
  });

  it('stop() ends the firings, also from inside a firing', async () => {
    const firings: string[] = [];
    const cron: CronTrigger = new CronTrigger('* * * * * *', undefined, (at) => {
      firings.push(at.toISOString());
      if (firings.length === 2) cron.stop();
    });
    triggers.push(cron);
    cron.start();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(firings).toEqual(['2026-01-01T00:00:04.000Z', '2026-01-01T00:00:05.000Z']);
    expect(cron.isRunning).toBe(false);
  });

  it('reads the cron in its time zone', async () => {
    const tokyo = trigger('0 0 9 * * *', 'Asia/Tokyo');
    const berlin = trigger('0 0 9 * * *', 'Europe/Berlin');
    tokyo.trigger.start();
    berlin.trigger.start();
    await vi.advanceTimersByTimeAsync(24 * 3_600_000);
    // 09:00 in Tokyo is midnight UTC; in Berlin (winter) 08:00 UTC.
    expect(tokyo.firings.map((firing) => firing.at)).toEqual(['2026-01-02T00:00:00.000Z']);
    expect(berlin.firings.map((firing) => firing.at)).toEqual(['2026-01-01T08:00:00.000Z']);
  });

  it('skips the instants missed while the process was blocked, never fires them in a burst', async () => {
    const { trigger: cron, firings } = trigger('* * * * * *', undefined);
    cron.start();
    await vi.advanceTimersByTimeAsync(999); // 00:00:03.999
    // From here the event loop was blocked for 4.5 s: every timer runs that much after the clock says it should.
    const clockNow = Date.now;
    vi.spyOn(Date, 'now').mockImplementation(() => clockNow() + 4_500);
    await vi.advanceTimersByTimeAsync(1);
    expect(firings.map((firing) => firing.at)).toEqual(['2026-01-01T00:00:04.000Z']);
    await vi.advanceTimersByTimeAsync(499); // the clock says 00:00:08.999
    expect(firings).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(firings.map((firing) => firing.at)).toEqual(['2026-01-01T00:00:04.000Z', '2026-01-01T00:00:09.000Z']);
  });

  it('waits for an instant further away than setTimeout can, by chained timers', async () => {
    const { trigger: cron, firings } = trigger('0 0 0 1 1 *', 'UTC');
    cron.start();
    await vi.advanceTimersByTimeAsync(364 * 86_400_000);
    expect(firings).toEqual([]);
    await vi.advanceTimersByTimeAsync(86_400_000);
    expect(firings.map((firing) => firing.at)).toEqual(['2027-01-01T00:00:00.000Z']);
  });
});
