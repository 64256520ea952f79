import { afterEach, describe, expect, it } from 'vitest';
import type { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import { ClusterInstance, firingsByInstant, waitForRuns, type FiredEvent, type RunEvent } from '../support/cluster.js';
import { eventually, startRegistry, uniqueNamespace, zkConnect } from '../support/zk.js';

const PARAMS = '0=A,1=B,2=C,3=D,4=E,5=F';
const LETTERS = ['A', 'B', 'C', 'D', 'E', 'F'];
const instances: ClusterInstance[] = [];
const registries: ZookeeperRegistryCenter[] = [];

afterEach(async () => {
  for (const instance of instances.splice(0)) instance.kill('SIGKILL');
  for (const registry of registries.splice(0)) await registry.close();
});

function startCluster(namespace: string, count: number): ClusterInstance[] {
  const started = Array.from(
    { length: count },
    () => new ClusterInstance({ zkConnect: zkConnect(), namespace, total: 6, params: PARAMS }),
  );
  instances.push(...started);
  return started;
}

/**
 * Every cron firing in the buckets (by its instant: a firing that starts a second late is still its own) started no
 * item twice, from `pids` only; each instance that fired an instant started every item it owns (its items in the
 * firings that started all six); at least two firings started all six; and every run had its item's parameter.
 * An instance may miss an instant on a loaded host, the others still running theirs: blocked across an instant, it
 * fires that one late and skips the next (ElasticJob's DoNothing misfire policy: lib/schedule/cron-trigger.ts), and
 * a firing that finds its previous one still running is skipped and flagged as misfired (a full run saw a firing with
 * one instance's two items only).
 */
function expectEachItemOncePerFiring(buckets: Map<number, FiredEvent[]>, pids: number[], runs: RunEvent[]): void {
  const complete = [...buckets.values()].filter((fired) => new Set(fired.map((f) => f.item)).size === 6);
  expect(complete.length, 'firings that started all six items').toBeGreaterThanOrEqual(2);
  const owned = new Map<number, Set<number>>();
  for (const fired of complete) for (const f of fired) owned.set(f.pid, (owned.get(f.pid) ?? new Set()).add(f.item));
  const sorted = (items: Iterable<number>): number[] => [...items].sort((a, b) => a - b);
  for (const [second, fired] of buckets) {
    const label = `firing ${second}: ${JSON.stringify(fired.map((f) => [f.pid, f.item]))}`;
    const items = sorted(fired.map((f) => f.item));
    expect(new Set(items).size, label).toBe(items.length);
    for (const pid of new Set(fired.map((f) => f.pid))) {
      expect(pids, label).toContain(pid);
      expect(sorted(fired.filter((f) => f.pid === pid).map((f) => f.item)), label).toEqual(
        sorted(owned.get(pid) ?? []),
      );
    }
  }
  for (const run of runs) expect(run.param).toBe(LETTERS[run.item]);
}

/** The runs of these instances that started in [from, to). */
function runsIn(of: ClusterInstance[], from: number, to: number): RunEvent[] {
  return of.flatMap((i) => i.runs()).filter((r) => r.start >= from && r.start < to);
}

describe('a cluster of real processes', () => {
  it('3 instances share a 6-item every-second job: every item once per firing, never twice, right parameter', async () => {
    const namespace = uniqueNamespace('cluster');
    const cluster = startCluster(namespace, 3);
    await Promise.all(cluster.map((i) => i.waitForLine(/^READY$/, 60_000)));
    // Wait until the cluster has settled: all three instances run items of the same firing.
    let settledAt = 0;
    await waitForRuns(
      cluster,
      () => {
        const buckets = firingsByInstant(cluster, 0, Date.now());
        for (const [second, fired] of buckets) {
          if (new Set(fired.map((f) => f.pid)).size === 3 && fired.length === 6) settledAt = (second + 1) * 1000;
        }
        return settledAt > 0;
      },
      30_000,
      'all three instances sharing the items',
    );
    const windowEnd = settledAt + 5000;
    await waitForRuns(
      cluster,
      () => cluster.every((i) => i.firings().some((f) => f.scheduled >= windowEnd)),
      20_000,
      'five more firings',
    );
    expectEachItemOncePerFiring(
      firingsByInstant(cluster, settledAt, windowEnd),
      cluster.map((i) => i.pid),
      runsIn(cluster, settledAt, windowEnd),
    );
    // AVG_ALLOCATION: 2 items each, always the same ones.
    for (const instance of cluster) {
      const items = new Set(
        instance
          .runs()
          .filter((r) => r.start >= settledAt && r.start < windowEnd)
          .map((r) => r.item),
      );
      expect(items.size).toBe(2);
    }
  });

  it('graceful leave: SIGTERM on the leader gives a new leader well within the session timeout, and the survivors cover all items', async () => {
    const namespace = uniqueNamespace('leave');
    const cluster = startCluster(namespace, 3);
    await Promise.all(cluster.map((i) => i.waitForLine(/^READY$/, 60_000)));
    const zk = await startRegistry({ namespace });
    registries.push(zk);
    const leaderPath = '/cluster-job/leader/election/instance';
    const leaderId = (await eventually(
      () => zk.getData(leaderPath),
      (d) => d !== undefined,
      10_000,
      'a leader',
    ))!.data.toString();
    // The leader node names one of the three by its full instance id ({ip}@-@{pid}).
    expect(cluster.map((i) => i.instanceId())).toContain(leaderId);
    const leader = cluster.find((i) => i.instanceId() === leaderId)!;
    const survivors = cluster.filter((i) => i !== leader);

    // Watch the leader node from an observer session, event-driven.
    const handover = new Promise<{ deletedAt: number; newLeader: string; electedAt: number }>((resolve) => {
      let deletedAt = 0;
      const watch = async (): Promise<void> => {
        const node = await zk.getData(leaderPath, (event) => {
          if (event.type === 'NODE_DELETED') deletedAt ||= Date.now();
          void watch();
        });
        if (!node) {
          deletedAt ||= Date.now();
          const stat = await zk.exists(leaderPath, () => void watch());
          if (stat) void watch();
        } else if (node.data.toString() !== leaderId) {
          resolve({ deletedAt, newLeader: node.data.toString(), electedAt: Date.now() });
        }
      };
      void watch();
    });

    // Nobody queues in the latch: the survivors race for the leader node directly, no latch node is made.
    const latchNodes: string[] = [];
    await zk.addPersistentRecursiveWatch('/cluster-job/leader/election/latch', (e) => {
      if (e.type === 'NODE_CREATED') latchNodes.push(e.path);
    });
    const termAt = Date.now();
    leader.kill('SIGTERM');
    const { deletedAt, newLeader, electedAt } = await handover;
    expect(latchNodes).toEqual([]);
    // Nest runs the shutdown hooks, then re-raises the signal: a clean exit by SIGTERM.
    const exitCode = await leader.exited;
    expect(exitCode === 0 || leader.child.signalCode === 'SIGTERM').toBe(true);
    process.stdout.write(
      `graceful leave: new leader ${electedAt - termAt} ms after SIGTERM (session timeout 15000 ms)\n`,
    );
    // The session timeout is 15 s: a takeover through expiry would take that long.
    expect(electedAt - termAt).toBeLessThan(5000);
    expect(deletedAt).toBeGreaterThan(0);
    expect(survivors.map((s) => s.pid).some((pid) => newLeader.endsWith(`@-@${pid}`))).toBe(true);
    expect(await zk.exists(`/cluster-job/instances/${leaderId}`)).toBeUndefined();
    expect(leader.lines.join('\n')).toContain('shut down');

    // The two survivors now cover all six items at every firing: from the first firing they are seen doing so (the
    // new leader reshards at its next firing, later on a loaded machine), for four firings. Judged by the firings'
    // instants: the firing the resharding delays may start in the next second, beside that second's own (a full run
    // saw one survivor's items started twice in one calendar second that way).
    const leftAt = Date.now();
    let from = 0;
    await waitForRuns(
      survivors,
      () => {
        const full = [...firingsByInstant(survivors, leftAt, Date.now())].find(
          ([, fired]) => new Set(fired.map((f) => f.item)).size === 6,
        );
        if (full) from = (full[0] + 1) * 1000;
        return full !== undefined;
      },
      30_000,
      'a firing with all six items on the survivors',
    );
    const to = from + 4000;
    await waitForRuns(
      survivors,
      () => survivors.every((i) => i.firings().some((f) => f.scheduled >= to)),
      20_000,
      'survivors firing',
    );
    expectEachItemOncePerFiring(
      firingsByInstant(survivors, from, to),
      survivors.map((s) => s.pid),
      runsIn(survivors, from, to),
    );
  });

  it('handover with a participant queued in the latch (a Java ElasticJob peer electing): the survivor queues behind it', async () => {
    const namespace = uniqueNamespace('queued');
    const cluster = startCluster(namespace, 2);
    await Promise.all(cluster.map((i) => i.waitForLine(/^READY$/, 60_000)));
    const zk = await startRegistry({ namespace });
    registries.push(zk);
    const leaderPath = '/cluster-job/leader/election/instance';
    const latchPath = '/cluster-job/leader/election/latch';
    const leaderId = (await eventually(
      () => zk.getData(leaderPath),
      (d) => d !== undefined,
      10_000,
      'a leader',
    ))!.data.toString();
    const leader = cluster.find((i) => leaderId.endsWith(`@-@${i.pid}`))!;
    const survivor = cluster.find((i) => i !== leader)!;
    // A foreign participant at the head of the latch, as Curator names them.
    const foreign = await zk.createProtectedEphemeralSequential(
      latchPath,
      'latch-',
      Buffer.from('java-peer'),
      Date.now() + 5000,
    );
    const queued: string[] = [];
    await zk.addPersistentRecursiveWatch(latchPath, (e) => {
      if (e.type === 'NODE_CREATED') queued.push(e.path);
    });
    leader.kill('SIGTERM');
    await leader.exited;
    await eventually(
      () => queued.length,
      (n) => n > 0,
      10_000,
      "the survivor's latch node",
    );
    // Queued behind the foreign participant, it has not taken the leader node.
    expect(await zk.exists(leaderPath)).toBeUndefined();
    await zk.remove(foreign);
    const elected = await eventually(
      () => zk.getData(leaderPath),
      (d) => d !== undefined,
      10_000,
      'the survivor leading',
    );
    expect(elected!.data.toString().endsWith(`@-@${survivor.pid}`)).toBe(true);
  });
});
