import { afterEach, describe, expect, it } from 'vitest';
import { ClusterInstance } from '../support/cluster.js';
import { eventually, uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * A streaming dataflow job across two real processes: the first instance streams both items without end; when a
 * second instance joins, the resharding flag stops the streams, and after the resharding each item streams on one
 * instance only, never on both at once.
 */

const instances: ClusterInstance[] = [];
afterEach(() => {
  for (const instance of instances.splice(0)) instance.kill('SIGKILL');
});

describe('dataflow streaming across two processes', () => {
  it('stops on a resharding when an instance joins; afterwards each item streams on its new owner only', async () => {
    const namespace = uniqueNamespace('dataflow-cluster');
    const options = {
      zkConnect: zkConnect(),
      namespace,
      total: 2,
      cron: '*/2 * * * * *',
      workMs: 30,
      type: 'dataflow' as const,
    };
    const first = new ClusterInstance(options);
    instances.push(first);
    await first.waitForLine(/^READY$/, 60_000);
    await eventually(
      () => new Set(first.batches().map((batch) => batch.item)).size,
      (items) => items === 2,
      15_000,
      'the first instance streaming both items',
    );

    const second = new ClusterInstance(options);
    instances.push(second);
    await second.waitForLine(/^READY$/, 60_000);
    const joinedAt = Date.now();
    await eventually(
      () => second.batches().length,
      (n) => n > 0,
      20_000,
      'the second instance streaming an item',
    );
    const moved = second.batches()[0]!.item;
    const firstOnMoved = first.batches().filter((batch) => batch.item === moved);
    // The first instance stopped streaming the moved item before the second one started it.
    expect(firstOnMoved.at(-1)!.at).toBeLessThan(second.batches()[0]!.at);
    // And it keeps streaming the item it still owns, after the resharding.
    await eventually(
      () => first.batches().filter((batch) => batch.item !== moved && batch.at > joinedAt + 3000).length,
      (n) => n > 0,
      15_000,
      'the first instance streaming its remaining item',
    );
    expect(first.batches().filter((batch) => batch.item === moved && batch.at > second.batches()[0]!.at)).toEqual([]);
  });
});
