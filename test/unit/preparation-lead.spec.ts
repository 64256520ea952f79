import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PreparationLead } from '../../lib/schedule/preparation-lead.js';

beforeEach(() => {
  vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00.000Z') });
});

afterEach(() => {
  vi.useRealTimers();
});

/** A firing asked to prepare now that was ready `tookMs` later. */
function prepare(lead: PreparationLead, tookMs: number): void {
  const since = Date.now();
  vi.advanceTimersByTime(tookMs);
  lead.prepared(since, Date.now());
}

describe('PreparationLead', () => {
  it('leads by the most until a preparation is told (the first instant after start-up), then learns from it', () => {
    const lead = new PreparationLead();
    expect(lead.ms).toBe(PreparationLead.MAX_MS);
    prepare(lead, 3);
    expect(lead.ms).toBe(25);
  });

  it('leads by 25 ms while preparations are quick (one job: one ZooKeeper write)', () => {
    const lead = new PreparationLead();
    prepare(lead, 3);
    prepare(lead, 2);
    expect(lead.ms).toBe(25);
  });

  it('grows to the longest preparation and a fifth, at once, up to a second', () => {
    const lead = new PreparationLead();
    // A thousand jobs at one instant: the last one is ready 400 ms after it was asked.
    for (const took of [5, 120, 400, 260]) prepare(lead, took);
    expect(lead.ms).toBe(480);
    prepare(lead, 5_000);
    expect(lead.ms).toBe(PreparationLead.MAX_MS);
  });

  it('halves every half hour once instants get lighter, down to 25 ms', () => {
    const lead = new PreparationLead();
    prepare(lead, 400);
    prepare(lead, 10); // a light instant right after: the burst's need still stands
    expect(lead.ms).toBe(480);
    vi.advanceTimersByTime(PreparationLead.HALF_LIFE_MS);
    expect(lead.ms).toBe(240);
    vi.advanceTimersByTime(4 * PreparationLead.HALF_LIFE_MS);
    expect(lead.ms).toBe(25);
  });
});
