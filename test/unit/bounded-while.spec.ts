import { describe, expect, it } from 'vitest';
import { mapBoundedWhile } from '../../lib/registry/request-limits.js';

/** Registration's gate (orchestrator.registerAll): a few at a time while connected, all at once during an outage. */
describe('mapBoundedWhile', () => {
  const deferred = () => {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  };

  it('runs at most `limit` at once while bounded, in order, and every item once', async () => {
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const results = await mapBoundedWhile(
      Array.from({ length: 50 }, (_, i) => i),
      async (i) => {
        order.push(i);
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, i % 3));
        running--;
        return i * 2;
      },
      4,
      () => true,
    );
    expect(most).toBe(4);
    expect(order).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(results).toEqual(Array.from({ length: 50 }, (_, i) => i * 2));
  });

  it('lets everything waiting start once no longer bounded (an outage: all wait for the connection together)', async () => {
    let connected = true;
    const gates = Array.from({ length: 10 }, deferred);
    const started: number[] = [];
    const all = mapBoundedWhile(
      gates.map((_, i) => i),
      async (i) => {
        started.push(i);
        await gates[i]!.promise;
      },
      2,
      () => connected,
    );
    await new Promise((r) => setTimeout(r, 10));
    expect(started).toEqual([0, 1]);
    connected = false;
    gates[0]!.resolve(); // a running one ends while disconnected: the others no longer wait for slots
    await new Promise((r) => setTimeout(r, 10));
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const gate of gates) gate.resolve();
    await all;
  });
});
