import { describe, expect, it } from 'vitest';
import { nextFireTime, normalizeCron, validateCron } from '../../lib/schedule/cron-expression.js';

describe('cron', () => {
  it('supports seconds, 5-field crons and time zones', () => {
    const from = new Date('2026-01-01T00:00:00.000Z');
    expect(nextFireTime('*/5 * * * * *', undefined, from).toISOString()).toBe('2026-01-01T00:00:05.000Z');
    expect(nextFireTime('0 * * * *', 'UTC', from).toISOString()).toBe('2026-01-01T01:00:00.000Z');
    expect(nextFireTime('0 0 9 * * *', 'Europe/Berlin', from).toISOString()).toBe('2026-01-01T08:00:00.000Z');
  });
  it('answers from any starting point when the parsed expression is reused', () => {
    // The parsed expression is cached per cron: going back in time must not inherit the last answer.
    const late = new Date('2026-03-01T10:00:07.000Z');
    const early = new Date('2026-01-01T00:00:00.000Z');
    expect(nextFireTime('*/10 * * * * *', undefined, late).toISOString()).toBe('2026-03-01T10:00:10.000Z');
    expect(nextFireTime('*/10 * * * * *', undefined, early).toISOString()).toBe('2026-01-01T00:00:10.000Z');
    expect(nextFireTime('*/10 * * * * *', 'Asia/Tokyo', early).toISOString()).toBe('2026-01-01T00:00:10.000Z');
    expect(nextFireTime('0 0 9 * * *', 'Asia/Tokyo', early).toISOString()).toBe('2026-01-02T00:00:00.000Z');
    expect(nextFireTime('0 0 9 * * *', 'Europe/Berlin', early).toISOString()).toBe('2026-01-01T08:00:00.000Z');
  });
  it('accepts Quartz ? and a * year', () => {
    expect(normalizeCron('0/1 * * * * ?')).toBe('0/1 * * * * *');
    expect(normalizeCron('0 0 12 * * ? *')).toBe('0 0 12 * * *');
    expect(validateCron('0 0 12 * * ? *', undefined)).toBeUndefined();
  });
  it('explains what is wrong', () => {
    expect(validateCron('61 * * * * *', undefined)).toMatch(/not a valid cron/);
    expect(validateCron('* *', undefined)).toMatch(/5 or 6 fields/);
  });
});
