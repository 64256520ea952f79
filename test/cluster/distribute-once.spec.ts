import { afterEach, describe, expect, it } from 'vitest';
import { ClusterInstance, waitForRuns } from '../support/cluster.js';
import { eventually, uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * A distribute-once job listener across three real processes: called once per firing in the whole cluster, before
 * the items start and after they all complete; also in the firing during which an instance dies (it is not waited
 * for once its session is gone, and nothing deadlocks).
 */

const instances: ClusterInstance[] = [];
afterEach(() => {
  for (const instance of instances.splice(0)) instance.kill('SIGKILL');
});

const SESSION_TIMEOUT_MS = 4000;

type OnceCall = ReturnType<ClusterInstance['onceCalls']>[number];

function onceCalls(cluster: ClusterInstance[]): OnceCall[] {
  return cluster.flatMap((instance) => instance.onceCalls()).sort((a, b) => a.at - b.at);
}

/** Once per round: started, completed, started, completed... across the cluster; a repeat or a gap breaks it. */
function expectAlternating(calls: OnceCall[]): void {
  expect(calls.length).toBeGreaterThan(0);
  calls.forEach((call, index) => {
    const expected = (calls[0]!.event === 'once-started') === (index % 2 === 0) ? 'once-started' : 'once-completed';
    expect(`${index}: ${call.event}`).toBe(`${index}: ${expected}`);
  });
}

describe('distribute-once listener', () => {
  it('runs once per firing across three instances, also when one dies mid-firing', async () => {
    const namespace = uniqueNamespace('once');
    const cluster = Array.from(
      { length: 3 },
      () =>
        new ClusterInstance({
          zkConnect: zkConnect(),
          namespace,
          total: 6,
          cron: '* * * * * *',
          workMs: 400,
          sessionTimeoutMs: SESSION_TIMEOUT_MS,
          listener: 'once',
        }),
    );
    instances.push(...cluster);
    await Promise.all(cluster.map((instance) => instance.waitForLine(/^READY$/, 60_000)));

    // Every instance runs items (sharded over all three), then three more rounds of the listener.
    await waitForRuns(
      cluster,
      () => cluster.every((instance) => instance.runs().length > 0),
      30_000,
      'items on all three instances',
    );
    const sharded = onceCalls(cluster).length;
    await eventually(
      () => onceCalls(cluster).filter((call) => call.event === 'once-completed').length,
      (n) => n >= Math.ceil(sharded / 2) + 3,
      30_000,
      'three more firings',
    );
    expectAlternating(onceCalls(cluster));

    // Kill one instance while its items run.
    const victim = cluster[2]!;
    const startsBefore = victim.starts().length;
    await eventually(
      () => victim.starts().length,
      (n) => n > startsBefore,
      10_000,
      'the victim starting items',
    );
    const killedAt = Date.now();
    victim.kill('SIGKILL');
    const survivors = cluster.slice(0, 2);

    // That firing's completion is not waited for beyond the victim's session: its listener call comes once.
    await eventually(
      () => onceCalls(survivors).filter((call) => call.event === 'once-completed' && call.at > killedAt).length,
      (n) => n >= 1,
      SESSION_TIMEOUT_MS + 15_000,
      "the completion of the victim's firing",
    );
    // And the survivors go on, resharded, once per firing.
    await eventually(
      () => onceCalls(survivors).filter((call) => call.event === 'once-completed' && call.at > killedAt).length,
      (n) => n >= 3,
      30_000,
      'firings after the kill',
    );
    expectAlternating(onceCalls(cluster));
    const late = onceCalls(survivors).find((call) => call.event === 'once-completed' && call.at > killedAt)!;
    expect(late.at - killedAt).toBeLessThan(SESSION_TIMEOUT_MS + 10_000);
  });
});
