import { describe, expect, it } from 'vitest';
import { SilenceMeter, type Verdict } from '../../lib/registry/silence-meter.js';

/** A 4 s session (the tests' observers): the watchdog checks every 666 ms and its limit is 2666 ms. */
const TIMEOUT = 4000;
const PERIOD = 666;

/** The verdicts of checks at these instants, the last answer received at `receivedAt` (the meter reset at 0). */
function verdicts(receivedAt: number, checks: readonly number[]): Verdict[] {
  const meter = new SilenceMeter();
  meter.reset(0);
  return checks.map((now) => meter.check(now, receivedAt, TIMEOUT, PERIOD));
}

describe('SilenceMeter: the silence held against ZooKeeper is net of our own stalls', () => {
  it('checks on time and nothing received: silent once past 2/3 of the timeout (a silent partition)', () => {
    expect(verdicts(0, [666, 1332, 1998, 2664, 3330])).toEqual(['heard', 'heard', 'heard', 'heard', 'silent']);
  });

  // The two drops seen in request-limits.spec.ts under load (timestamps from its log, made relative to the last
  // answer): both were judged at a check that came on time right after our own stall.
  it('a 2.6 s stall, then a check 430 ms after the ping sent at its end: not silent', () => {
    expect(verdicts(0, [363, 2919, 3349])).toEqual(['heard', 'stalled', 'stalled']);
  });

  it('a 1.4 s stall, then a 0.9 s one while the ping is answered: not silent', () => {
    expect(verdicts(0, [482, 1894, 2839])).toEqual(['heard', 'heard', 'stalled']);
  });

  it('our stall excused, the server still gets the limit of our running time, and no more', () => {
    // A 6 s session: checks every 1000 ms, limit 4000 ms. 1000 ms of the silence are ours (the check at 3000).
    const meter = new SilenceMeter();
    meter.reset(0);
    const at = (now: number): Verdict => meter.check(now, 0, 6000, 1000);
    expect([1000, 3000, 4000].map(at)).toEqual(['heard', 'heard', 'heard']);
    expect(meter.ownSilenceMs).toBe(1000);
    expect(at(5000)).toBe('stalled'); // 4000 ms of it the server's
    expect(at(5500)).toBe('silent'); // 4500 ms of it the server's
  });

  it('a whole session timeout without an answer is silent, whoever stalled (the server may have expired it)', () => {
    expect(verdicts(0, [363, 2919, 3349, 4015])).toEqual(['heard', 'stalled', 'stalled', 'silent']);
    expect(verdicts(0, [4100])).toEqual(['silent']);
  });

  it('an answer starts the count again: a stall before it is not carried over', () => {
    const meter = new SilenceMeter();
    meter.reset(0);
    expect(meter.check(2500, 0, TIMEOUT, PERIOD)).toBe('heard'); // 1834 ms late
    expect(meter.ownSilenceMs).toBe(1834);
    // Answered at 2600; then checks on time: only the server's silence since that answer counts.
    expect(meter.check(3166, 2600, TIMEOUT, PERIOD)).toBe('heard');
    expect(meter.ownSilenceMs).toBe(0);
    const later = [3832, 4498, 5164, 5830];
    expect(later.map((now) => meter.check(now, 2600, TIMEOUT, PERIOD))).toEqual(['heard', 'heard', 'heard', 'silent']);
  });

  it('a late check counts only the part of its interval after the last answer', () => {
    const meter = new SilenceMeter();
    meter.reset(0);
    // The interval 0..3000 is 2334 ms late, but the answer came at 2800: 200 ms of silence, all of it ours.
    expect(meter.check(3000, 2800, TIMEOUT, PERIOD)).toBe('heard');
    expect(meter.ownSilenceMs).toBe(200);
  });
});
