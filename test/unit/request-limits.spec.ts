import { describe, expect, it } from 'vitest';
import type { TransactionOp } from '../../lib/registry/registry.types.js';
import { mapBounded, MULTI_BATCH_BYTES, MULTI_BATCH_OPS, multiBatches, multiOpBytes } from '../../lib/registry/request-limits.js';
import { MultiRequest } from '../../lib/registry/multi-request.js';
import { resolveJobConfiguration } from '../../lib/job/config/job-configuration.validator.js';

const create = (item: number, dataBytes = 20): TransactionOp => ({ op: 'create', path: `/job/sharding/${item}/running`, data: Buffer.alloc(dataBytes, 'x'), mode: 'EPHEMERAL' });

describe('multi requests within the request limit', () => {
  it('measures an op as the multi request encodes it', () => {
    const acl = Buffer.alloc(31);
    for (const op of [create(7), { op: 'remove', path: '/job/sharding/7/running', version: 3 } as TransactionOp, { op: 'setData', path: '/a', data: Buffer.from('b') } as TransactionOp]) {
      const encoded = new MultiRequest([{ ...op, flags: 0 } as never], acl).byteLength() - 9; // less the end header
      expect(multiOpBytes(op, acl.length)).toBe(encoded);
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
    for (const batch of byBytes) expect(batch.reduce((sum, op) => sum + multiOpBytes(op, 31), 0)).toBeLessThanOrEqual(MULTI_BATCH_BYTES);
    expect(multiBatches([create(1, 900_000)], 31)).toHaveLength(1); // larger than a batch: alone
    expect(multiBatches([], 31)).toEqual([]);
  });

  it('mapBounded keeps at most `limit` tasks in flight, returns results in order, and starts nothing after a failure', async () => {
    let inFlight = 0;
    let most = 0;
    const results = await mapBounded(Array.from({ length: 50 }, (_, i) => i), async (i) => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, i % 3));
      inFlight--;
      return i * 2;
    }, 4);
    expect(most).toBe(4);
    expect(results).toEqual(Array.from({ length: 50 }, (_, i) => i * 2));
    const started: number[] = [];
    await expect(mapBounded(Array.from({ length: 50 }, (_, i) => i), async (i) => {
      started.push(i);
      if (i === 2) throw new Error('no');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }, 2)).rejects.toThrow('no');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(started.length).toBeLessThan(6);
  });

  it('job options: at most 10000 items, and a configuration that fits one node', () => {
    const base = { jobName: 'j', cron: '* * * * * *' };
    expect(resolveJobConfiguration({ ...base, shardingTotalCount: 10_000 }).shardingTotalCount).toBe(10_000);
    expect(() => resolveJobConfiguration({ ...base, shardingTotalCount: 10_001 })).toThrow(/'shardingTotalCount': 10001 is more than the 10000 items/);
    expect(() => resolveJobConfiguration({ ...base, shardingTotalCount: 1, jobParameter: 'x'.repeat(1_000_000) })).toThrow(/'jobParameter'.*would not fit/);
  });
});
