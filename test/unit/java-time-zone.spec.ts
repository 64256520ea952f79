import { CronExpressionParser } from 'cron-parser';
import { describe, expect, it } from 'vitest';
import { fromJavaTimeZone, TimeZoneDialectError, toJavaTimeZone } from '../../lib/schedule/java-time-zone.js';

/** Noon every day in `timeZone`, the first instant after 2026-01-01T00:00Z. */
const noon = (timeZone: string): string =>
  CronExpressionParser.parse('0 0 12 * * *', { tz: timeZone, currentDate: new Date('2026-01-01T00:00:00Z') })
    .next()
    .toISOString()!;

describe('time zones as Java ElasticJob reads them (GMT offsets only)', () => {
  it.each([
    ['UTC', 'GMT', '2026-01-01T12:00:00.000Z'],
    ['Etc/GMT-8', 'GMT+08:00', '2026-01-01T04:00:00.000Z'], // POSIX sign: Etc/GMT-8 is 8 hours ahead
    ['Etc/GMT+5', 'GMT-05:00', '2026-01-01T17:00:00.000Z'],
  ])('%s is stored as %s, and read back to the same instants', (ours, java, instant) => {
    expect(toJavaTimeZone(ours)).toBe(java);
    expect(noon(ours)).toBe(instant);
    expect(noon(fromJavaTimeZone(java)!)).toBe(instant);
  });

  it.each([
    ['GMT+08:00', 'Etc/GMT-8'],
    ['GMT+0800', 'Etc/GMT-8'],
    ['GMT-5', 'Etc/GMT+5'],
    ['GMT', 'GMT'],
    ['GMT+00:00', 'GMT'],
    ['Europe/Berlin', 'Europe/Berlin'], // not Java's, but this library's own earlier writes
  ])('reads the stored %s as %s', (stored, ours) => {
    expect(fromJavaTimeZone(stored)).toBe(ours);
  });

  it('has no zone for none, and stores an IANA name with DST as it is (a Java instance cannot read it)', () => {
    expect(fromJavaTimeZone('')).toBeUndefined();
    expect(toJavaTimeZone(undefined)).toBeUndefined();
    expect(toJavaTimeZone('Europe/Berlin')).toBe('Europe/Berlin');
  });

  it('refuses an offset with minutes, which has no IANA name', () => {
    expect(() => fromJavaTimeZone('GMT+05:30')).toThrow(TimeZoneDialectError);
  });
});
