/**
 * Issue 41's bench rows (docs/guide/item-policies.md): what the item policies cost when set but unused, and what item
 * logs cost a burst, each against the same load without them in the same run (configurations alternated round by
 * round, so that a machine busy for a while weighs on both). Run by bench/run.ts.
 */
import type { LineProcess } from '../../test/support/line-process.js';
import { benchApp, type Figure, figure, ns, percentile, quick, ROUNDS, sleep } from '../support/bench-support.js';

/** The steady row: jobs of one item firing every second. */
const STEADY_JOBS = 100;
/** The burst row's load (burst.bench.ts): a thousand jobs of two items at one instant every 10 s. */
const BURST_JOBS = 1000;
const BURST_PERIOD_MS = 10_000;
/** The lines each item logs in the burst with item logs. */
export const LINES_PER_ITEM = 100;

export interface SteadyCost {
  /** Every job's start after its instant. */
  latenessP99: Figure;
  latenessP50: Figure;
  /** ZooKeeper requests per firing (one job's). */
  writes: Figure;
  reads: Figure;
}

/** Lateness figures of the lines a process printed since `from`. */
function latenessSince(app: LineProcess, from: number): number[] {
  return app.lines
    .slice(from)
    .filter((line) => line.includes('"lateness"'))
    .map((line) => (JSON.parse(line.slice(4)) as { ms: number }).ms);
}

async function zookeeperStats(app: LineProcess): Promise<{ reads: number; writes: number }> {
  const from = app.lines.length;
  app.send('stats');
  return JSON.parse((await app.waitForLine(/"event":"stats"/, 5000, from)).slice(4)) as {
    reads: number;
    writes: number;
  };
}

/**
 * A steady firing (STEADY_JOBS jobs of one item every second, monitorExecution on) with every job's timeout, retries
 * and cover-early set but never used (its items succeed at once), against none: lateness and requests per firing.
 */
export async function policiesSetUnused(): Promise<Record<'none' | 'policies', SteadyCost>> {
  const seconds = quick ? 5 : 15;
  const configs = { none: {}, policies: { ITEM_POLICIES: 'true' } } as const;
  const samples = {
    none: { p99: [] as number[], p50: [] as number[], reads: [] as number[], writes: [] as number[] },
    policies: { p99: [] as number[], p50: [] as number[], reads: [] as number[], writes: [] as number[] },
  };
  for (let r = 0; r < (quick ? 1 : Math.min(ROUNDS, 3)); r++) {
    for (const [name, extra] of Object.entries(configs) as Array<[keyof typeof configs, Record<string, string>]>) {
      const app = benchApp({
        ZK_NAMESPACE: ns(`policies-${name}`),
        JOBS: String(STEADY_JOBS),
        JOB_TOTAL: '1',
        MONITOR: 'true',
        LATENESS_ALL: 'true',
        LATENESS_PERIOD_MS: '1000',
        ...extra,
      });
      try {
        await app.waitForLine(/"event":"sharded"/, 120_000);
        await sleep(2000); // past the firings that shard
        const from = app.lines.length;
        const before = await zookeeperStats(app);
        await sleep(seconds * 1000);
        const after = await zookeeperStats(app);
        const late = latenessSince(app, from);
        samples[name].p99.push(percentile(late, 99));
        samples[name].p50.push(percentile(late, 50));
        const firings = seconds * STEADY_JOBS;
        samples[name].reads.push((after.reads - before.reads) / firings);
        samples[name].writes.push((after.writes - before.writes) / firings);
      } finally {
        await app.stop();
      }
    }
  }
  const cost = (name: keyof typeof configs): SteadyCost => ({
    latenessP99: figure(samples[name].p99, 'ms'),
    latenessP50: figure(samples[name].p50, 'ms'),
    reads: figure(samples[name].reads, 'req/firing'),
    writes: figure(samples[name].writes, 'req/firing'),
  });
  return { none: cost('none'), policies: cost('policies') };
}

/** Item-start lateness over `count` whole bursts, after the one that shards and the first after it. */
async function burstLateness(app: LineProcess, count: number): Promise<number[]> {
  await app.waitForLine(/"event":"lateness"/, 600_000); // the burst that shards
  // From the middle of a period on: each window holds one whole burst; the first after sharding is left out.
  await sleep(Math.ceil(Date.now() / BURST_PERIOD_MS) * BURST_PERIOD_MS + BURST_PERIOD_MS / 2 - Date.now());
  await sleep(BURST_PERIOD_MS);
  const from = app.lines.length;
  await sleep(count * BURST_PERIOD_MS);
  return latenessSince(app, from);
}

export interface BurstLogsCost {
  p99: Figure;
  p50: Figure;
  /** Starts measured per configuration, all rounds. */
  samples: number;
}

/**
 * The burst row's load (1000 jobs × 2 items at one instant every 10 s) with every item logging LINES_PER_ITEM lines
 * through `context.logger` (kept with its execution in the in-memory execution log), against items that log none
 * (target: p99 within 10%), against the same lines handed to a logger that does nothing (`noop`: the handlers' own
 * string building, which no logger spares them; `logs` less `noop` is the library's cost) and against them through a
 * plain Nest Logger, not kept (`plain`: what Nest's own Logger costs those handlers, 'log' off): item-start lateness.
 */
export async function itemLogsInBurst(): Promise<Record<'none' | 'noop' | 'plain' | 'logs', BurstLogsCost>> {
  const configs = {
    none: {},
    noop: { ITEM_LOG_LINES: String(LINES_PER_ITEM), ITEM_LOG_NOOP: 'true' },
    plain: { ITEM_LOG_LINES: String(LINES_PER_ITEM), ITEM_LOG_PLAIN: 'true' },
    logs: { ITEM_LOG_LINES: String(LINES_PER_ITEM) },
  } as const;
  const p99 = { none: [] as number[], noop: [] as number[], plain: [] as number[], logs: [] as number[] };
  const p50 = { none: [] as number[], noop: [] as number[], plain: [] as number[], logs: [] as number[] };
  const counted = { none: 0, noop: 0, plain: 0, logs: 0 };
  for (let r = 0; r < (quick ? 1 : 2); r++) {
    for (const [name, extra] of Object.entries(configs) as Array<[keyof typeof configs, Record<string, string>]>) {
      const app = benchApp({
        ZK_NAMESPACE: ns(`burst-logs-${name}`),
        JOBS: String(BURST_JOBS),
        JOB_TOTAL: '2',
        JOB_CRON: '0/10 * * * * ?',
        LATENESS_ALL: 'true',
        LATENESS_EVERY_ITEM: 'true',
        LATENESS_PERIOD_MS: String(BURST_PERIOD_MS),
        ...extra,
      });
      try {
        const late = await burstLateness(app, quick ? 3 : 6);
        p99[name].push(percentile(late, 99));
        p50[name].push(percentile(late, 50));
        counted[name] += late.length;
      } finally {
        await app.stop();
      }
    }
  }
  const cost = (name: keyof typeof configs): BurstLogsCost => ({
    p99: figure(p99[name], 'ms'),
    p50: figure(p50[name], 'ms'),
    samples: counted[name],
  });
  return { none: cost('none'), noop: cost('noop'), plain: cost('plain'), logs: cost('logs') };
}
