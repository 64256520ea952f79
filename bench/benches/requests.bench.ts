/** Bench: ZooKeeper requests per firing, alone and in a cluster. Run by bench/run.ts. */
import { LineProcess } from '../../test/support/line-process.js';
import { type Figure, figure, sleep, ns, ROUNDS, quick, benchApp, mntr } from '../support/bench-support.js';

export async function requestsPerFiring(
  monitor: boolean,
): Promise<{ client: { reads: Figure; writes: Figure }; server: Figure }> {
  const seconds = quick ? 5 : 10;
  const run = async (cron: string): Promise<{ reads: number; writes: number; packets: number }> => {
    const app = benchApp({
      ZK_NAMESPACE: ns('requests'),
      JOBS: '1',
      JOB_TOTAL: '1',
      MONITOR: String(monitor),
      JOB_CRON: cron,
    });
    await app.waitForLine(cron.startsWith('*') ? /"event":"sharded"/ : /"event":"registered"/, 60_000);
    await sleep(1500);
    const stats = async (): Promise<{ reads: number; writes: number }> => {
      const from = app.lines.length;
      app.send('stats');
      const line = await app.waitForLine(/"event":"stats"/, 5000, from);
      return JSON.parse(line.slice(4)) as { reads: number; writes: number };
    };
    const before = await stats();
    const m0 = await mntr();
    await sleep(seconds * 1000);
    const after = await stats();
    const m1 = await mntr();
    await app.stop();
    return {
      reads: after.reads - before.reads,
      writes: after.writes - before.writes,
      packets: m1.zk_packets_received! - m0.zk_packets_received!,
    };
  };
  const reads: number[] = [];
  const writes: number[] = [];
  const server: number[] = [];
  for (let r = 0; r < Math.min(ROUNDS, 3); r++) {
    const firing = await run('* * * * * *');
    const idle = await run('0 0 0 1 1 *'); // same app, no firings: its pings and background are subtracted
    reads.push((firing.reads - idle.reads) / seconds);
    writes.push((firing.writes - idle.writes) / seconds);
    server.push((firing.packets - idle.packets) / seconds);
  }
  return {
    client: { reads: figure(reads, 'req/firing'), writes: figure(writes, 'req/firing') },
    server: figure(server, 'req/firing'),
  };
}

/** The same in a 3-instance cluster (one item each): what a firing costs each instance, peers' markers included. */
export async function requestsPerFiringInCluster(): Promise<{ reads: Figure; writes: Figure }> {
  const seconds = quick ? 5 : 10;
  const reads: number[] = [];
  const writes: number[] = [];
  for (let r = 0; r < Math.min(ROUNDS, 2); r++) {
    const namespace = ns('requests-cluster');
    const apps = Array.from({ length: 3 }, () =>
      benchApp({ ZK_NAMESPACE: namespace, JOBS: '1', JOB_TOTAL: '3', MONITOR: 'true' }),
    );
    await Promise.all(apps.map((a) => a.waitForLine(/"event":"sharded"/, 60_000)));
    await sleep(2000);
    const stats = async (app: LineProcess): Promise<{ reads: number; writes: number }> => {
      const from = app.lines.length;
      app.send('stats');
      return JSON.parse((await app.waitForLine(/"event":"stats"/, 5000, from)).slice(4)) as {
        reads: number;
        writes: number;
      };
    };
    const before = await Promise.all(apps.map(stats));
    await sleep(seconds * 1000);
    const after = await Promise.all(apps.map(stats));
    for (const [i, a] of after.entries()) {
      reads.push((a.reads - before[i]!.reads) / seconds);
      writes.push((a.writes - before[i]!.writes) / seconds);
    }
    await Promise.all(apps.map((app) => app.stop()));
  }
  return { reads: figure(reads, 'req/firing'), writes: figure(writes, 'req/firing') };
}
