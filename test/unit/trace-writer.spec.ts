import { Logger } from '@nestjs/common';
import { describe, expect, it, vi } from 'vitest';
import type { TracedEvent, TraceSession, TraceStore } from '../../lib/tracing/trace-store.interface.js';
import { TraceWriter } from '../../lib/tracing/trace-writer.js';

/**
 * The store-agnostic half of tracing (issue 28: buffering, retry and outages in one place, a store only does I/O),
 * against an in-memory store: what a second database's store would rely on.
 */

const status = (id: string): TracedEvent => ({ type: 'status', id, jobName: 'report' }) as unknown as TracedEvent;

class MemoryStore implements TraceStore {
  readonly name = 'the memory store';
  rows: string[] = [];
  prepares = 0;
  /** What the next writes throw, in order (undefined: write). */
  failures: unknown[] = [];
  open(): Promise<TraceSession> {
    return Promise.resolve({
      prepare: async () => void this.prepares++,
      write: async (events) => {
        const failure = this.failures.shift();
        if (failure !== undefined) throw failure;
        if (events.some((event) => event.id === 'poison')) throw { refused: true };
        this.rows.push(...events.map((event) => event.id));
      },
      release: () => undefined,
    });
  }
  isRefused = (error: unknown): boolean => (error as { refused?: boolean }).refused === true;
  isUnprepared = (error: unknown): boolean => (error as { unprepared?: boolean }).unprepared === true;
  recentExecutions = () => Promise.resolve([]);
  close = () => Promise.resolve();
}

describe('TraceWriter', () => {
  it('drops an event the store refuses, alone; prepares again when the store says its tables are gone', async () => {
    const logger = new Logger('test');
    vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    vi.spyOn(logger, 'log').mockImplementation(() => undefined);
    const store = new MemoryStore();
    const writer = new TraceWriter(store, { batchSize: 10 }, logger);
    for (const id of ['a', 'poison', 'b']) writer.push(status(id));
    await writer.flush();
    expect(store.rows).toEqual(['a', 'b']);
    expect(writer.stats).toEqual({ written: 3, dropped: 1, buffered: 0 });
    expect(store.prepares).toBe(1);

    // A table dropped under it: the pass fails, and the next one (after the backoff) prepares first.
    store.failures = [{ unprepared: true }];
    writer.push(status('c'));
    await writer.flush();
    expect(writer.stats.buffered).toBe(1);
    await writer.stop(1000); // the backoff is not waited for at shutdown
    expect(store.rows).toEqual(['a', 'b', 'c']);
    expect(store.prepares).toBe(2);
  });
});

describe('TraceWriter in a long outage', () => {
  it("tries the store again soon once its buffer overflows: the outage's newest events are kept", async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const logger = new Logger('test');
      vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
      vi.spyOn(logger, 'log').mockImplementation(() => undefined);
      vi.spyOn(logger, 'debug').mockImplementation(() => undefined);
      const store = new MemoryStore();
      const writer = new TraceWriter(store, { maxBufferedEvents: 3 }, logger);
      // Five failed passes, each after the last one's backoff (0.5, 1, 2, 4 s): the next waits 8 s.
      store.failures = [1, 2, 3, 4, 5].map((n) => new Error(`down ${n}`));
      writer.push(status('outage-1'));
      for (const wait of [0, 500, 1_000, 2_000, 4_000]) {
        vi.advanceTimersByTime(wait);
        await writer.flush();
      }
      expect(store.failures).toEqual([]);
      // The store is back; events keep coming and overflow the buffer while the 8 s wait runs.
      for (const id of ['outage-2', 'outage-3', 'outage-4']) writer.push(status(id));
      expect(writer.stats).toEqual({ written: 0, dropped: 1, buffered: 3 });
      vi.advanceTimersByTime(500);
      await writer.flush();
      expect(store.rows).toEqual(['outage-2', 'outage-3', 'outage-4']);
    } finally {
      vi.useRealTimers();
    }
  });
});
