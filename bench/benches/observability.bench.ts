/** Bench: what events, listeners, metrics and tracing cost a firing. Run by bench/run.ts. */
import { LocalPostgres } from '../../test/support/local-postgres.js';
import { findFreePort } from '../../lib/devtools/local-zookeeper.js';
import { type Figure, figure, percentile, sleep, ns, ROUNDS, quick, benchApp } from '../support/bench-support.js';

export interface ObservedCost {
  latenessP99: Figure;
  reads: Figure;
  writes: Figure;
}

/**
 * What events, a job listener, metrics (API without an SDK) and tracing into PostgreSQL cost a firing, in the same
 * run: lateness p99 and client requests per firing (1 job, 1 item, every second, monitorExecution), plain, with all
 * of it on and the database up, and with the database down (a port nobody listens on).
 */
export async function observabilityCost(): Promise<Record<'plain' | 'observed' | 'databaseDown', ObservedCost>> {
  const seconds = quick ? 5 : 10;
  const database = await LocalPostgres.create();
  const deadPort = await findFreePort();
  const configs = {
    plain: {},
    observed: { OBSERVE: 'true', TRACING_URL: database.connectionString },
    databaseDown: { OBSERVE: 'true', TRACING_URL: `postgres://postgres@127.0.0.1:${deadPort}/postgres` },
  } as const;
  const samples = Object.fromEntries(
    Object.keys(configs).map((name) => [
      name,
      { lateness: [] as number[], reads: [] as number[], writes: [] as number[] },
    ]),
  ) as Record<keyof typeof configs, { lateness: number[]; reads: number[]; writes: number[] }>;
  try {
    for (let r = 0; r < Math.min(ROUNDS, 3); r++) {
      for (const [name, extra] of Object.entries(configs) as Array<[keyof typeof configs, Record<string, string>]>) {
        const app = benchApp({
          ZK_NAMESPACE: ns(`observe-${name}`),
          JOBS: '1',
          JOB_TOTAL: '1',
          MONITOR: 'true',
          ...extra,
        });
        await app.waitForLine(/"event":"sharded"/, 60_000);
        await sleep(1500);
        const stats = async (): Promise<{ reads: number; writes: number }> => {
          const from = app.lines.length;
          app.send('stats');
          return JSON.parse((await app.waitForLine(/"event":"stats"/, 5000, from)).slice(4)) as {
            reads: number;
            writes: number;
          };
        };
        const from = app.lines.length;
        const before = await stats();
        await sleep(seconds * 1000);
        const after = await stats();
        const late = app.lines
          .slice(from)
          .filter((line) => line.includes('"lateness"'))
          .map((line) => (JSON.parse(line.slice(4)) as { ms: number }).ms);
        samples[name].lateness.push(percentile(late, 99));
        samples[name].reads.push((after.reads - before.reads) / seconds);
        samples[name].writes.push((after.writes - before.writes) / seconds);
        await app.stop();
      }
    }
  } finally {
    await database.destroy();
  }
  const cost = (name: keyof typeof configs): ObservedCost => ({
    latenessP99: figure(samples[name].lateness, 'ms'),
    reads: figure(samples[name].reads, 'req/firing'),
    writes: figure(samples[name].writes, 'req/firing'),
  });
  return { plain: cost('plain'), observed: cost('observed'), databaseDown: cost('databaseDown') };
}
