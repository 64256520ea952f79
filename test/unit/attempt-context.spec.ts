import { Logger } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import type { JobContext } from '../../lib/job/context/job-context.js';
import { attemptContext, LazyAbort, RunningItem } from '../../lib/job/executor/item-attempts.js';
import type { ItemLogLines } from '../../lib/job/policies/item-lines.js';

// An attempt's context shares its `signal` and `logger` accessors with every other context (item-attempts.ts): each
// must still read its own attempt's state, and look to the item's code as the object literal it replaced.

const ctx = { logger: new Logger('ElasticJob:job') } as unknown as JobContext;

function base(item: number) {
  return {
    jobName: 'job',
    taskId: `job@-@0,1@-@READY@-@ip@-@1`,
    shardingTotalCount: 2,
    jobParameter: 'p',
    shardingItem: item,
    shardingParameter: item === 0 ? 'a' : undefined,
  };
}

describe("an attempt's context", () => {
  it("reads its own item's signal, logger and progress, never another's", () => {
    const kept = new Map<string, ItemLogLines>();
    const book = { keepLines: (id: string, lines: ItemLogLines) => void kept.set(id, lines) };
    const runningA = new RunningItem();
    const runningB = new RunningItem();
    const a = attemptContext(ctx, base(0), runningA, 1, book, 'id-a');
    const b = attemptContext(ctx, base(1), runningB, 2, book, 'id-b');

    runningA.abort(new Error('a only'));
    expect(a.signal.aborted).toBe(true);
    expect(b.signal.aborted).toBe(false);
    expect(a.signal).toBe(a.signal); // made once
    expect(b.signal).not.toBe(a.signal);

    a.logger.log('from a');
    expect(a.logger).toBe(a.logger);
    expect(b.logger).not.toBe(a.logger);
    b.logger.warn('from b');
    expect(kept.get('id-a')?.lines.map((line) => line.message)).toEqual(['from a']);
    expect(kept.get('id-b')?.lines.map((line) => line.message)).toEqual(['from b']);

    const { reportProgress } = b; // detached, as an item may pass it on
    reportProgress(40);
    expect(runningB.progress?.value).toBe(40);
    expect(runningA.progress).toBeUndefined();
  });

  it('keeps a later attempt apart from the earlier one (a new signal each attempt)', () => {
    const running = new RunningItem();
    const first = attemptContext(ctx, base(0), running, 1, undefined, undefined);
    running.attempt.abort(new Error('timed out'));
    expect(first.signal.aborted).toBe(true);
    // item-attempts.ts's runAttempts: the next attempt gets a signal of its own.
    running.attempt = new LazyAbort();
    const second = attemptContext(ctx, base(0), running, 2, undefined, undefined);
    expect(second.signal.aborted).toBe(false);
    expect(first.signal.aborted).toBe(true);
    expect(second.attempt).toBe(2);
  });

  it('has the own, enumerable properties of an object literal, in its order; spread and JSON see them', () => {
    const context = attemptContext(ctx, base(0), new RunningItem(), 1, undefined, undefined);
    expect(Object.keys(context)).toEqual([
      'jobName',
      'taskId',
      'shardingTotalCount',
      'jobParameter',
      'shardingItem',
      'shardingParameter',
      'attempt',
      'signal',
      'logger',
      'reportProgress',
    ]);
    const { signal, ...item } = context; // what transportJob sends
    expect(signal).toBe(context.signal);
    expect(item.logger).toBe(context.logger);
    expect(typeof item.reportProgress).toBe('function');
    const spread = { ...context };
    expect(spread.signal).toBe(context.signal);
    expect(Object.getOwnPropertySymbols(spread)).toEqual([]);
    expect(JSON.parse(JSON.stringify(context))).toMatchObject({ jobName: 'job', shardingItem: 0, attempt: 1 });
    // Read-only, as a getter-only literal property.
    expect(() => {
      (context as { signal: unknown }).signal = undefined;
    }).toThrow(TypeError);
  });
});
