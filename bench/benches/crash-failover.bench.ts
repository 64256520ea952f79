/** Bench: a crashed instance's items re-run by a peer. Run by bench/run.ts. */
import { ClusterInstance } from '../../test/support/cluster.js';
import { type Figure, figure, ns, ROUNDS, zk } from '../support/bench-support.js';

export async function crashFailover(sessionTimeoutMs: number): Promise<Figure> {
  const samples: number[] = [];
  for (let r = 0; r < Math.min(ROUNDS, 3); r++) {
    const namespace = ns('failover');
    const cluster = Array.from(
      { length: 3 },
      () =>
        new ClusterInstance({
          zkConnect: zk().connectString,
          namespace,
          total: 2,
          cron: '*/10 * * * * *',
          workMs: 6000,
          failover: true,
          sessionTimeoutMs,
        }),
    );
    await Promise.all(cluster.map((i) => i.waitForLine(/^READY$/, 60_000)));
    const started = await Promise.race(
      cluster.map((i) => i.waitForLine(/"event":"start","item":0/, 30_000).then(() => i)),
    );
    const killedAt = Date.now();
    started.kill('SIGKILL');
    const peers = cluster.filter((i) => i !== started);
    const line = await Promise.race(
      peers.map((p) =>
        p.waitForLine((l) => /"event":"start","item":0/.test(l) && JSON.parse(l.slice(4)).start > killedAt, 30_000),
      ),
    );
    samples.push((JSON.parse(line.slice(4)) as { start: number }).start - killedAt);
    for (const i of cluster) i.kill('SIGKILL');
  }
  return figure(samples, 'ms');
}
