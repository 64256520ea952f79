import { describe, expect, it } from 'vitest';
import { nextFireTime, normalizeCron, validateCron } from '../../lib/schedule/cron-expression.js';

describe('cron', () => {
  it('supports seconds, 5-field crons and time zones', () => {
    const from = new Date('2026-01-01T00:00:00.000Z');
    expect(nextFireTime('*/5 * * * * *', undefined, from).toISOString()).toBe('2026-01-01T00:00:05.000Z');
    expect(nextFireTime('0 * * * *', 'UTC', from).toISOString()).toBe('2026-01-01T01:00:00.000Z');
    expect(nextFireTime('0 0 9 * * *', 'Europe/Berlin', from).toISOString()).toBe('2026-01-01T08:00:00.000Z');
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
