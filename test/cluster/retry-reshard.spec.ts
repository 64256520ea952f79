import { afterEach, describe, expect, it } from 'vitest';
import { ClusterInstance, waitForRuns, type RunEvent } from '../support/cluster.js';
import { uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * Retries while the cluster reshards (docs/guide/item-policies.md, "Retries"): an item waiting out its backoff when
 * the job is to be resharded is not retried where it was; its owner after the resharding runs it at its own firing,
 * and no item ever runs on two instances at once.
 */

const instances: ClusterInstance[] = [];
afterEach(() => {
  for (const instance of instances.splice(0)) instance.kill('SIGKILL');
});

describe('retries across a resharding', () => {
  it('an item in its backoff when an instance leaves is not retried there; it runs once more, on one instance', async () => {
    const namespace = uniqueNamespace('retry-reshard');
    // Both items fail their first run in each process; a retry waits 8 s: time for the peer to leave meanwhile.
    const options = {
      zkConnect: zkConnect(),
      namespace,
      total: 2,
      cron: '* * * * * *',
      workMs: 20,
      failOnce: [0, 1],
      retry: { attempts: 3, delayMilliseconds: 8000 },
    };
    const stays = new ClusterInstance(options);
    const leaves = new ClusterInstance(options);
    instances.push(stays, leaves);
    await Promise.all(instances.map((i) => i.waitForLine(/^READY$/, 60_000)));
    const cluster = [stays, leaves];
    // Each instance's item failed its first attempt: both wait out their backoff.
    await waitForRuns(
      cluster,
      () => stays.runs().some((run) => run.failed) && leaves.runs().some((run) => run.failed),
      60_000,
      'a failed first attempt on each instance',
    );
    const failedHere = stays.runs().find((run) => run.failed)!.item;
    // The peer leaves (its shutdown gives its own retry up): the job is to be resharded.
    const leftAt = Date.now();
    await leaves.stop('SIGTERM');
    // The instance that stays runs both items again once it has resharded.
    await waitForRuns(
      [stays],
      () => [0, 1].every((item) => stays.runs().some((run) => run.item === item && run.start > leftAt && !run.failed)),
      60_000,
      'both items on the instance that stays',
    );
    // No retry ran: the item in its backoff was given up for the resharding, then run by its firing (attempt 1).
    expect(stays.runs().filter((run) => run.item === failedHere && (run.attempt ?? 1) > 1)).toEqual([]);
    expect(leaves.runs().filter((run) => (run.attempt ?? 1) > 1)).toEqual([]);
    // Never on both instances at once.
    const all: RunEvent[] = [...stays.runs(), ...leaves.runs()];
    for (const item of [0, 1]) {
      const runs = all.filter((run) => run.item === item).sort((a, b) => a.start - b.start);
      for (let i = 1; i < runs.length; i++) expect(runs[i]!.start).toBeGreaterThanOrEqual(runs[i - 1]!.end);
    }
  });
});
