import { describe, expect, it } from 'vitest';
import type { TransactionOp } from '../../lib/registry/registry.types.js';
import { MULTI_BATCH_OPS } from '../../lib/registry/request-limits.js';
import { TransactionCoalescer } from '../../lib/registry/transaction-coalescer.js';

/** The coalescer's rules with a recorded send: what goes together, and what each caller is told. */

const create = (path: string): TransactionOp => ({ op: 'create', path, data: Buffer.alloc(0), mode: 'EPHEMERAL' });

function recorder(fails: (ops: readonly TransactionOp[]) => boolean = () => false) {
  const sent: string[][] = [];
  const coalescer = new TransactionCoalescer(
    async (ops) => {
      sent.push(ops.map((op) => op.path));
      if (fails(ops)) throw Object.assign(new Error('NODE_EXISTS'), { code: 'NODE_EXISTS' });
    },
    (ops) => ops.length * 100,
  );
  return { sent, coalescer };
}

describe('TransactionCoalescer', () => {
  it("sends the transactions of one tick as one request, and the next tick's as another", async () => {
    const { sent, coalescer } = recorder();
    await Promise.all([coalescer.submit([create('/a/1')]), coalescer.submit([create('/b/1'), create('/b/2')])]);
    await coalescer.submit([create('/c/1')]);
    expect(sent).toEqual([['/a/1', '/b/1', '/b/2'], ['/c/1']]);
  });

  it('when the combined request fails, sends each on its own: only the failing one is told of its failure', async () => {
    const { sent, coalescer } = recorder((ops) => ops.some((op) => op.path === '/b/1'));
    const results = await Promise.allSettled([
      coalescer.submit([create('/a/1')]),
      coalescer.submit([create('/b/1')]),
      coalescer.submit([create('/c/1')]),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(sent).toEqual([['/a/1', '/b/1', '/c/1'], ['/a/1'], ['/b/1'], ['/c/1']]);
  });

  it('keeps each request within the op limit, and sends a large transaction alone', async () => {
    const { sent, coalescer } = recorder();
    const many = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => create(`/${prefix}/${i}`));
    await Promise.all([
      coalescer.submit(many('a', 400)),
      coalescer.submit(many('b', 400)),
      coalescer.submit(many('c', 400)), // 1200 ops: not with the other two
      coalescer.submit(many('d', MULTI_BATCH_OPS / 2 + 1)), // too large to share: at once, alone
    ]);
    expect(sent.map((ops) => ops.length)).toEqual([MULTI_BATCH_OPS / 2 + 1, 800, 400]);
  });
});
