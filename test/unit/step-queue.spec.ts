import { describe, expect, it } from 'vitest';
import { StepQueue } from '../../lib/registry/step-queue.js';

/** A promise and the function that resolves it. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('StepQueue', () => {
  it('runs steps in the order queued, each after the previous one has settled', async () => {
    const queue = new StepQueue(() => true);
    const ran: string[] = [];
    const first = gate();
    const second = gate();
    queue.push(() => first.promise.then(() => void ran.push('a')));
    queue.push(() => void ran.push('b'));
    queue.push(() => second.promise.then(() => void ran.push('c')));
    queue.push(() => void ran.push('d'));
    // The third step's wait ends first: it still runs after the first.
    second.open();
    await new Promise((resolve) => setImmediate(resolve));
    expect(ran).toEqual([]);
    first.open();
    await queue.idle();
    expect(ran).toEqual(['a', 'b', 'c', 'd']);
  });

  it('goes on past a failed step; run() rejects with its failure', async () => {
    const queue = new StepQueue(() => true);
    const ran: string[] = [];
    queue.push(() => {
      throw new Error('sync');
    });
    queue.push(() => Promise.reject(new Error('async')));
    const failed = queue.run(() => Promise.reject(new Error('mine')));
    queue.push(() => void ran.push('after'));
    await expect(failed).rejects.toThrow('mine');
    await queue.idle();
    expect(ran).toEqual(['after']);
  });

  it('skips the steps reached while disabled, resolving their callers', async () => {
    let enabled = true;
    const queue = new StepQueue(() => enabled);
    const ran: string[] = [];
    const held = gate();
    queue.push(() => held.promise);
    const skipped = queue.run(() => void ran.push('skipped'));
    enabled = false;
    held.open();
    await skipped;
    expect(ran).toEqual([]);
  });

  it('idle() waits for every step queued so far', async () => {
    const queue = new StepQueue(() => true);
    const held = gate();
    let count = 0;
    queue.push(() => held.promise);
    for (let i = 0; i < 5000; i++) queue.push(() => void count++);
    const idle = queue.idle();
    held.open();
    await idle;
    expect(count).toBe(5000);
    // Nothing queued: resolves at once, and says it is not busy.
    expect(queue.busy).toBe(false);
    await queue.idle();
    queue.push(() => undefined);
    expect(queue.busy).toBe(true);
    await queue.idle();
    expect(queue.busy).toBe(false);
  });
});
