/** Bench: graceful leader handover: ours against a Curator LeaderLatch (Java). Run by bench/run.ts. */
import { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import type { WatchEvent } from '../../lib/registry/registry.types.js';
import { CURATOR_RECIPES_JAR, ZOOKEEPER_JAR } from '../../lib/devtools/local-zookeeper.js';
import { LineProcess } from '../../test/support/line-process.js';
import { type Figure, figure, sleep, ns, ROUNDS, quick, zk, benchApp, observer } from '../support/bench-support.js';

/**
 * Handovers are a few milliseconds, each two ZooKeeper commits (fsync) and a round trip or two, so single samples
 * swing by 2 to 4× on a shared disk (both sides); five rounds left the ratio of medians at 0.18× in one run and
 * 0.29× in another. Fifteen rounds per side, whatever BENCH_ROUNDS says (unless it asks for more).
 */
const HANDOVER_ROUNDS = Math.max(ROUNDS, quick ? 5 : 15);

/** Deletion of leader/election/instance to its re-creation by another participant, seen by an observer. */
function watchHandover(registry: ZookeeperRegistryCenter, path: string, previous: string): Promise<number> {
  return new Promise((resolve) => {
    let deletedAt = 0;
    const onEvent = (event: WatchEvent): void => {
      if (event.type === 'NODE_DELETED') deletedAt = performance.now();
      void check();
    };
    const check = async (): Promise<void> => {
      const node = await registry.getData(path, onEvent);
      if (!node) {
        if (!deletedAt) deletedAt = performance.now();
        const stat = await registry.exists(path, onEvent);
        if (stat) void check();
      } else if (node.data.toString() !== previous && deletedAt) {
        resolve(performance.now() - deletedAt);
      }
    };
    void check();
  });
}

export async function handover(kind: 'nestjs-elastic-job' | 'curator'): Promise<Figure> {
  const namespace = ns('handover');
  const job = 'handover-0';
  const registry = await observer(namespace);
  const participants: LineProcess[] = [];
  let next = 0;
  const spawnOne = async (): Promise<LineProcess> => {
    const id = `java-${next++}`;
    const p =
      kind === 'curator'
        ? new LineProcess('java', [
            '-cp',
            `${CURATOR_RECIPES_JAR}:${ZOOKEEPER_JAR}`,
            'bench/java/CuratorElection.java',
            zk().connectString,
            namespace,
            job,
            id,
          ])
        : benchApp({ ZK_NAMESPACE: namespace, JOBS: '1', JOB_PREFIX: 'handover', JOB_CRON: '0 0 0 1 1 *' });
    (p as LineProcess & { benchId?: string }).benchId = id;
    await p.waitForLine(kind === 'curator' ? /^READY/ : /"event":"registered"/, 120_000);
    participants.push(p);
    return p;
  };
  for (let i = 0; i < 3; i++) await spawnOne();
  const samples: number[] = [];
  const leaderPath = `/${job}/leader/election/instance`;
  for (let r = 0; r < HANDOVER_ROUNDS; r++) {
    const leaderId = (await registry.getData(leaderPath))!.data.toString();
    const leader = participants.find((p) =>
      kind === 'curator'
        ? (p as LineProcess & { benchId?: string }).benchId === leaderId
        : leaderId.endsWith(`@-@${p.pid}`),
    )!;
    const measured = watchHandover(registry, leaderPath, leaderId);
    await sleep(200);
    if (kind === 'curator') leader.send('quit');
    else leader.kill('SIGTERM');
    samples.push(await measured);
    await leader.exited;
    participants.splice(participants.indexOf(leader), 1);
    await spawnOne();
  }
  for (const p of participants) p.kill('SIGKILL');
  await registry.close();
  return figure(samples, 'ms');
}
