import { describe, expect, it } from 'vitest';
import { afterThisInstant, afterThisInstantCall, untilAfterThisInstant } from '../../lib/util/after-this-instant.js';

// Work after the instant is queued as closures and as calls with their arguments in one queue (no closure a call):
// each must run once, in the order queued, with its own arguments.
describe('work after this instant', () => {
  it('runs closures and queued calls in the order queued, each with its own arguments, after this pass', async () => {
    const ran: string[] = [];
    const call = (a: string, b: number, c: undefined, d: { n: number }): void => {
      ran.push(`${a}${b}${String(c)}${d.n}`);
    };
    afterThisInstant(() => ran.push('first'));
    afterThisInstantCall(call, 'x', 1, undefined, { n: 10 });
    afterThisInstant(() => ran.push('between'));
    afterThisInstantCall(call, 'y', 2, undefined, { n: 20 });
    expect(ran).toEqual([]); // not in this pass
    await untilAfterThisInstant();
    expect(ran).toEqual(['first', 'x1undefined10', 'between', 'y2undefined20']);
  });

  it('keeps running the rest when one throws, and queues anew once a batch ran', async () => {
    const ran: number[] = [];
    afterThisInstantCall(
      () => {
        throw new Error('boom');
      },
      0,
      0,
      0,
      0,
    );
    afterThisInstantCall((a: number) => ran.push(a), 1, 0, 0, 0);
    await untilAfterThisInstant();
    afterThisInstantCall((a: number) => ran.push(a), 2, 0, 0, 0);
    await untilAfterThisInstant();
    expect(ran).toEqual([1, 2]);
  });
});
