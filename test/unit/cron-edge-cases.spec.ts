import { describe, expect, it } from 'vitest';
import { nextFireTime } from '../../lib/schedule/cron-expression.js';

/**
 * Cron edge cases with fixed clocks (docs/guide/jobs-and-sharding.md, "Cron dialect"): daylight-saving transitions in a
 * time zone, the last day of the month (L) and the nth weekday (#).
 */

function instants(cron: string, timeZone: string | undefined, fromIso: string, count: number): string[] {
  const out: string[] = [];
  let at = new Date(fromIso);
  for (let index = 0; index < count; index++) {
    at = nextFireTime(cron, timeZone, at);
    out.push(at.toISOString());
  }
  return out;
}

const local = (iso: string, timeZone: string): string =>
  new Date(iso).toLocaleString('sv-SE', { timeZone }).replace(' ', 'T');

describe('daylight saving time (Europe/Berlin, 2026)', () => {
  it('spring forward: a daily job set inside the missing hour fires once that day, an hour later on the clock', () => {
    const fired = instants('0 30 2 * * *', 'Europe/Berlin', '2026-03-27T12:00:00Z', 3);
    expect(fired.map((iso) => local(iso, 'Europe/Berlin'))).toEqual([
      '2026-03-28T02:30:00',
      '2026-03-29T03:30:00', // 02:30 does not exist that night: once, not zero times
      '2026-03-30T02:30:00',
    ]);
  });

  it('fall back: a daily job set inside the repeated hour fires once that day, at its first pass', () => {
    const fired = instants('0 30 2 * * *', 'Europe/Berlin', '2026-10-23T12:00:00Z', 3);
    expect(fired).toEqual(['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']);
    expect(fired.map((iso) => local(iso, 'Europe/Berlin'))).toEqual([
      '2026-10-24T02:30:00',
      '2026-10-25T02:30:00', // not again an hour later, when 02:30 comes round a second time
      '2026-10-26T02:30:00',
    ]);
  });

  it('an interval cron follows real time through both transitions: every half hour, no gap and no repeat', () => {
    const spring = instants('0 */30 * * * *', 'Europe/Berlin', '2026-03-29T00:00:00Z', 4);
    const fall = instants('0 */30 * * * *', 'Europe/Berlin', '2026-10-24T23:30:00Z', 6);
    for (const fired of [spring, fall]) {
      const gaps = fired.slice(1).map((iso, index) => Date.parse(iso) - Date.parse(fired[index]!));
      expect(gaps.every((gap) => gap === 30 * 60_000)).toBe(true);
    }
  });
});

describe('last day and nth weekday', () => {
  it('L: the last day of each month, leap years included', () => {
    expect(instants('0 0 0 L * *', 'UTC', '2028-01-15T00:00:00Z', 3)).toEqual([
      '2028-01-31T00:00:00.000Z',
      '2028-02-29T00:00:00.000Z',
      '2028-03-31T00:00:00.000Z',
    ]);
  });

  it('#: the second Monday of each month', () => {
    expect(instants('0 0 0 * * 1#2', 'UTC', '2026-02-01T00:00:00Z', 3)).toEqual([
      '2026-02-09T00:00:00.000Z',
      '2026-03-09T00:00:00.000Z',
      '2026-04-13T00:00:00.000Z',
    ]);
  });
});
