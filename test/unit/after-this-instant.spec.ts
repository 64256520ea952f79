import { describe, expect, it } from 'vitest';
import {
  afterThisInstant,
  afterThisInstantCall,
  untilAfterThisInstant,
  untilInstant,
} from '../../lib/util/after-this-instant.js';

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

// Issue 43: the firings of one instant share their waits (one promise, one timer), and each still sees its instant.
describe('waits shared by the firings of an instant', () => {
  it('untilAfterThisInstant: one promise for a batch, a new one once the batch ran', async () => {
    const first = untilAfterThisInstant();
    expect(untilAfterThisInstant()).toBe(first);
    const ran: string[] = [];
    afterThisInstant(() => ran.push('queued after both callers'));
    await first;
    expect(ran).toEqual(['queued after both callers']); // the whole batch ran before either resumed
    expect(untilAfterThisInstant()).not.toBe(first);
  });

  it('untilInstant: one promise for an instant, resolved at it; another instant waits on its own', async () => {
    const at = Date.now() + 30;
    const wait = untilInstant(at);
    expect(untilInstant(at)).toBe(wait);
    expect(untilInstant(at + 1)).not.toBe(wait);
    await wait;
    // Timers may wake a millisecond early (callers loop on the clock); never more.
    expect(Date.now()).toBeGreaterThanOrEqual(at - 1);
    expect(untilInstant(at)).not.toBe(wait); // a past instant's wait is not kept
  });
});
