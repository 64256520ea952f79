import { describe, expect, it } from 'vitest';
import type { TransactionOp } from '../../lib/registry/registry.types.js';
import {
  mapBounded,
  STARTS_PER_TURN,
  MULTI_BATCH_BYTES,
  MULTI_BATCH_OPS,
  multiBatches,
  multiOpBytes,
  RequestSlots,
} from '../../lib/registry/request-limits.js';
import { settlesWithin } from '../../lib/util/deferred.js';
import { MultiRequest } from '../../lib/registry/multi-request.js';
import { resolveJobConfiguration } from '../../lib/job/config/job-configuration.validator.js';

const create = (item: number, dataBytes = 20): TransactionOp => ({
  op: 'create',
  path: `/job/sharding/${item}/running`,
  data: Buffer.alloc(dataBytes, 'x'),
  mode: 'EPHEMERAL',
});

describe('multi requests within the request limit', () => {
  it('measures an op as the multi request encodes it', () => {
    const acl = Buffer.alloc(31);
    for (const op of [
      create(7),
      { op: 'remove', path: '/job/sharding/7/running', version: 3 } as TransactionOp,
      { op: 'setData', path: '/a', data: Buffer.from('b') } as TransactionOp,
    ]) {
      // What the encoder really writes (byteLength shares multiOpBytes' measure, so it proves nothing here).
      const request = new MultiRequest([{ ...op, flags: 0 } as never], acl);
      const encoded = request.serialize(Buffer.alloc(4096), 0) - 9; // less the end header
      expect(multiOpBytes(op, acl.length)).toBe(encoded);
    }
  });

  it('measures paths as sent: the namespace and the chroot count (the encoder writes them into every path)', () => {
    const acl = Buffer.alloc(31);
    const op = create(7);
    const request = new MultiRequest([{ ...op, path: `/a-namespace${op.path}`, flags: 0 } as never], acl);
    request.setChrootPath('/some/chroot');
    const encoded = request.serialize(Buffer.alloc(4096), 0) - 9;
    expect(multiOpBytes(op, acl.length, '/a-namespace/some/chroot'.length)).toBe(encoded);
  });

  it('puts the leading ops (the root check) at the start of every batch, counted in its limits', () => {
    const check: TransactionOp = { op: 'check', path: '/job' };
    const many = Array.from({ length: 2500 }, (_, item) => create(item));
    const batches = multiBatches(many, 31, 20, [check]);
    expect(batches.map((batch) => batch.length)).toEqual([MULTI_BATCH_OPS, MULTI_BATCH_OPS, 503]);
    for (const batch of batches) expect(batch[0]).toBe(check);
    expect(batches.flatMap((batch) => batch.slice(1))).toEqual(many);
    const large = Array.from({ length: 10 }, (_, item) => create(item, 100_000));
    for (const batch of multiBatches(large, 31, 20, [check])) {
      expect(batch.reduce((sum, op) => sum + multiOpBytes(op, 31, 20), 9)).toBeLessThanOrEqual(MULTI_BATCH_BYTES);
    }
  });

  it('cuts ops in order into batches of at most MULTI_BATCH_OPS ops and MULTI_BATCH_BYTES bytes', () => {
    const many = Array.from({ length: 2500 }, (_, item) => create(item));
    const byCount = multiBatches(many, 31);
    expect(byCount.map((batch) => batch.length)).toEqual([MULTI_BATCH_OPS, MULTI_BATCH_OPS, 500]);
    expect(byCount.flat()).toEqual(many);
    const large = Array.from({ length: 10 }, (_, item) => create(item, 100_000));
    const byBytes = multiBatches(large, 31);
    expect(byBytes.length).toBe(5);
    for (const batch of byBytes)
      expect(batch.reduce((sum, op) => sum + multiOpBytes(op, 31), 0)).toBeLessThanOrEqual(MULTI_BATCH_BYTES);
    expect(multiBatches([create(1, 900_000)], 31)).toHaveLength(1); // larger than a batch: alone
    expect(multiBatches([], 31)).toEqual([]);
  });

  it('RequestSlots keeps at most `limit` calls in flight, starts the others in order, and frees a failed slot', async () => {
    const slots = new RequestSlots(2);
    let inFlight = 0;
    let most = 0;
    const started: number[] = [];
    const calls = Array.from({ length: 8 }, (_, i) =>
      slots.run(async () => {
        started.push(i);
        most = Math.max(most, ++inFlight);
        await new Promise((resolve) => setTimeout(resolve, 1 + (i % 3)));
        inFlight--;
        if (i === 1) throw new Error('refused');
        return i;
      }),
    );
    const outcomes = await Promise.allSettled(calls);
    expect(most).toBe(2);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toHaveLength(1);
    expect(await slots.run(() => Promise.resolve('free'))).toBe('free');
  });

  it('settlesWithin: true when the work settles either way in time, false when it does not', async () => {
    expect(await settlesWithin(Promise.resolve(1), 1000)).toBe(true);
    expect(await settlesWithin(Promise.reject(new Error('no')), 1000)).toBe(true);
    expect(await settlesWithin(new Promise(() => undefined), 5)).toBe(false);
  });

  it('mapBounded keeps at most `limit` tasks in flight, returns results in order, and starts nothing after a failure', async () => {
    let inFlight = 0;
    let most = 0;
    const results = await mapBounded(
      Array.from({ length: 50 }, (_, i) => i),
      async (i) => {
        most = Math.max(most, ++inFlight);
        await new Promise((resolve) => setTimeout(resolve, i % 3));
        inFlight--;
        return i * 2;
      },
      4,
    );
    expect(most).toBe(4);
    expect(results).toEqual(Array.from({ length: 50 }, (_, i) => i * 2));
    const started: number[] = [];
    await expect(
      mapBounded(
        Array.from({ length: 50 }, (_, i) => i),
        async (i) => {
          started.push(i);
          if (i === 2) throw new Error('no');
          await new Promise((resolve) => setTimeout(resolve, 5));
        },
        2,
      ),
    ).rejects.toThrow('no');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(started.length).toBeLessThan(6);
  });

  it.each([
    ['all at once', 5000],
    ['a few at a time', 8],
  ])('mapBounded (%s) lets the event loop turn while thousands of tasks that never wait run', async (_mode, limit) => {
    let done = 0;
    const doneAtEachTurn: number[] = [];
    // Stands for what the loop does between turns (the socket's data, timers, our pings): once a turn.
    let turning = true;
    const turn = (): void => {
      doneAtEachTurn.push(done);
      if (turning) setImmediate(turn);
    };
    setImmediate(turn);
    const results = await mapBounded(
      Array.from({ length: 5 * STARTS_PER_TURN }, (_, i) => i),
      async (i) => {
        done++;
        return i;
      },
      limit,
    );
    turning = false;
    expect(results).toHaveLength(5 * STARTS_PER_TURN);
    // The loop turned before the last task: never more than a turn's worth of tasks between two turns.
    expect(doneAtEachTurn.some((count) => count > 0 && count < 5 * STARTS_PER_TURN)).toBe(true);
  });

  it('job options: at most 10000 items, and a configuration that fits one node', () => {
    const base = { jobName: 'j', cron: '* * * * * *' };
    expect(resolveJobConfiguration({ ...base, shardingTotalCount: 10_000 }).shardingTotalCount).toBe(10_000);
    expect(() => resolveJobConfiguration({ ...base, shardingTotalCount: 10_001 })).toThrow(
      /'shardingTotalCount': 10001 is more than the 10000 items/,
    );
    expect(() =>
      resolveJobConfiguration({ ...base, shardingTotalCount: 1, jobParameter: 'x'.repeat(1_000_000) }),
    ).toThrow(/'jobParameter'.*would not fit/);
    // Measured as written: 300 000 control characters are 300 KB as a string but 1.2 MB as YAML (each is escaped
    // as \x01), which ZooKeeper would refuse.
    expect(() =>
      resolveJobConfiguration({ ...base, shardingTotalCount: 1, jobParameter: '\u0001'.repeat(300_000) }),
    ).toThrow(/'jobParameter'.*would not fit/);
    expect(() =>
      resolveJobConfiguration({ ...base, shardingTotalCount: 1, jobParameter: 'x'.repeat(300_000) }),
    ).not.toThrow();
  });
});
