/** Bench: start-up, memory and shutdown from 10 to 10,000 jobs, and clusters of 2 to 8 processes. Run by bench/run.ts. */
import { LineProcess } from '../../test/support/line-process.js';
import {
  type Figure,
  figure,
  round,
  percentile,
  sleep,
  ns,
  ROUNDS,
  quick,
  benchApp,
  observer,
  mntr,
} from '../support/bench-support.js';

export interface ScaleFigures {
  bootstrapMs: Figure;
  /** Jobs registered and sharded, between two firings: what each job holds. */
  rssIdlePerJobKb: Figure | undefined;
  /** Every job firing every second (a thousand firings a second at 1000 jobs). */
  rssFiringPerJobKb: Figure | undefined;
  /** Right when the last job is sharded, after a GC: start-up's high-water mark. */
  rssStartPerJobKb: Figure;
  heapPerJobKb: Figure;
  znodesPerJob: number;
  watchesPerJob: number;
}

/** The cron period of the idle-footprint apps, and how many are measured per size (a minute or more each). */
const IDLE_PERIOD_S = 30;
const IDLE_ROUNDS = 2;

/** The RSS of a bench app, sampled every 250 ms for `forMs` (no GC forced): the median, in bytes. */
async function steadyRss(app: LineProcess, forMs: number): Promise<number> {
  const samples: number[] = [];
  for (const end = performance.now() + forMs; performance.now() < end;) {
    const from = app.lines.length;
    app.send('rss');
    const line = await app.waitForLine(/"event":"rss"/, 10_000, from);
    samples.push((JSON.parse(line.slice(4)) as { rss: number }).rss);
    await sleep(250);
  }
  return figure(samples, 'B').median;
}

/**
 * Each round: an app with no jobs (the baseline: what Nest and Node cost) and one with `jobs` jobs, both running.
 * RSS per job is their difference over `jobs`, the baseline measured the same way at the same time.
 */
export async function scale(jobs: number, memory = true): Promise<ScaleFigures> {
  const rounds = Math.min(ROUNDS, jobs >= 1000 ? 2 : 3);
  const bootstrap: number[] = [];
  const rssStart: number[] = [];
  const rssFiring: number[] = [];
  const rssIdle: number[] = [];
  const heap: number[] = [];
  let znodes = 0;
  let watches = 0;
  for (let r = 0; r < rounds; r++) {
    const base = benchApp({ ZK_NAMESPACE: ns('scale0'), JOBS: '0' });
    try {
      const baseLine = await base.waitForLine(/"event":"sharded"/, 60_000);
      const baseline = JSON.parse(baseLine.slice(4)) as { sinceStartMs: number; rss: number; heapUsed: number };
      const m0 = await mntr();
      const app = benchApp({ ZK_NAMESPACE: ns('scale'), JOBS: String(jobs), JOB_TOTAL: '1' });
      try {
        const line = await app.waitForLine(/"event":"sharded"/, 300_000);
        const done = JSON.parse(line.slice(4)) as { sinceStartMs: number; rss: number; heapUsed: number };
        const m1 = await mntr();
        bootstrap.push(done.sinceStartMs - baseline.sinceStartMs);
        rssStart.push((done.rss - baseline.rss) / 1024 / jobs);
        heap.push((done.heapUsed - baseline.heapUsed) / 1024 / jobs);
        znodes = (m1.zk_znode_count! - m0.zk_znode_count!) / jobs;
        watches = (m1.zk_watch_count! - m0.zk_watch_count!) / jobs;
        if (memory) {
          await sleep(5_000);
          const [firing, idleBase] = await Promise.all([steadyRss(app, 10_000), steadyRss(base, 10_000)]);
          rssFiring.push((firing - idleBase) / 1024 / jobs);
        }
      } finally {
        await app.stop();
      }
      if (r >= IDLE_ROUNDS || !memory) continue;
      // The same jobs on a 30-second cron, between firings: sharded at their first firing; then, once start-up is a
      // whole period behind, RSS is sampled over one whole period (a firing and the quiet after it).
      const idle = benchApp({
        ZK_NAMESPACE: ns('scale-idle'),
        JOBS: String(jobs),
        JOB_TOTAL: '1',
        JOB_CRON: `0/${IDLE_PERIOD_S} * * * * ?`,
      });
      try {
        await idle.waitForLine(/"event":"sharded"/, 300_000);
        const period = IDLE_PERIOD_S * 1000;
        await sleep(Math.ceil(Date.now() / period) * period + 1000 - Date.now());
        const [held, idleBase] = await Promise.all([steadyRss(idle, period), steadyRss(base, period)]);
        rssIdle.push((held - idleBase) / 1024 / jobs);
      } finally {
        await idle.stop();
      }
    } finally {
      await base.stop();
    }
  }
  return {
    bootstrapMs: figure(bootstrap, 'ms'),
    rssIdlePerJobKb: rssIdle.length ? figure(rssIdle, 'KB') : undefined,
    rssFiringPerJobKb: rssFiring.length ? figure(rssFiring, 'KB') : undefined,
    rssStartPerJobKb: figure(rssStart, 'KB'),
    heapPerJobKb: figure(heap, 'KB'),
    znodesPerJob: round(znodes),
    watchesPerJob: round(watches),
  };
}

/**
 * 10,000 jobs in one process (issue 19's first target), one round: time until all are registered and until all
 * are sharded (a 10-second cron: at every second, 10,000 firings a second would be what is measured), RSS and heap
 * per job at that point and over one cron period (above a baseline app sampled alongside), znodes and watches per
 * job, and SIGTERM to exit with the instance and leader nodes left behind.
 */
export async function scaleTenThousand(jobs: number): Promise<{
  registeredMs: number;
  shardedMs: number;
  rssStartPerJobKb: number;
  heapPerJobKb: number;
  rssPeriodPerJobKb: number;
  znodesPerJob: number;
  watchesPerJob: number;
  shutdownMs: number;
  instancesLeft: number;
  leadersLeft: number;
}> {
  const base = benchApp({ ZK_NAMESPACE: ns('scale10k-0'), JOBS: '0' });
  const namespace = ns('scale10k');
  try {
    const baseline = JSON.parse((await base.waitForLine(/"event":"sharded"/, 60_000)).slice(4)) as {
      sinceStartMs: number;
      rss: number;
      heapUsed: number;
    };
    const m0 = await mntr();
    const app = benchApp({ ZK_NAMESPACE: namespace, JOBS: String(jobs), JOB_TOTAL: '1', JOB_CRON: '0/10 * * * * ?' });
    try {
      const registered = JSON.parse((await app.waitForLine(/"event":"registered"/, 600_000)).slice(4)) as {
        sinceStartMs: number;
      };
      const done = JSON.parse((await app.waitForLine(/"event":"sharded"/, 600_000)).slice(4)) as {
        sinceStartMs: number;
        rss: number;
        heapUsed: number;
      };
      const m1 = await mntr();
      const [period, periodBase] = await Promise.all([steadyRss(app, 10_000), steadyRss(base, 10_000)]);
      const started = performance.now();
      app.kill('SIGTERM');
      await app.exited;
      const shutdownMs = Math.round(performance.now() - started);
      const registry = await observer(namespace);
      let instancesLeft = 0;
      let leadersLeft = 0;
      try {
        const names = (await registry.getChildren('/')) ?? [];
        for (let i = 0; i < names.length; i += 256) {
          const counts = await Promise.all(
            names
              .slice(i, i + 256)
              .map(async (name) => [
                ((await registry.getChildren(`/${name}/instances`)) ?? []).length,
                (await registry.exists(`/${name}/leader/election/instance`)) ? 1 : 0,
              ]),
          );
          for (const [instances, leader] of counts) {
            instancesLeft += instances!;
            leadersLeft += leader!;
          }
        }
      } finally {
        await registry.close();
      }
      return {
        registeredMs: registered.sinceStartMs - baseline.sinceStartMs,
        shardedMs: done.sinceStartMs - baseline.sinceStartMs,
        rssStartPerJobKb: round((done.rss - baseline.rss) / 1024 / jobs),
        heapPerJobKb: round((done.heapUsed - baseline.heapUsed) / 1024 / jobs),
        rssPeriodPerJobKb: round((period - periodBase) / 1024 / jobs),
        znodesPerJob: round((m1.zk_znode_count! - m0.zk_znode_count!) / jobs),
        watchesPerJob: round((m1.zk_watch_count! - m0.zk_watch_count!) / jobs),
        shutdownMs,
        instancesLeft,
        leadersLeft,
      };
    } finally {
      await app.stop();
    }
  } finally {
    await base.stop();
  }
}

/**
 * Steady state at size (issue 19's fourth target): `jobs` jobs in one process, `firing` of them on an every-minute
 * cron (all at second 0), the rest registered and idle. Lateness of every firing job's start over `minutes` minutes
 * after the first (sharding) firing, and the event loop's delay over the same time; against one job on an
 * every-second cron in the same run, alone.
 */
export async function steadyAtSize(
  jobs: number,
  firing: number,
  minutes: number,
  /** Items per job (each job's item 0 reports its lateness). */
  total = 1,
): Promise<{ p99: number; p50: number; samples: number; eldP99: number; eldMax: number; oneJobP99: number }> {
  const one = benchApp({ ZK_NAMESPACE: ns('steady1'), JOBS: '1', JOB_TOTAL: '1' });
  let oneJobP99: number;
  try {
    await one.waitForLine(/"event":"sharded"/, 60_000);
    const from = one.lines.length;
    await sleep(quick ? 10_000 : 30_000);
    oneJobP99 = percentile(
      one.lines
        .slice(from)
        .filter((line) => line.includes('"lateness"'))
        .map((line) => (JSON.parse(line.slice(4)) as { ms: number }).ms),
      99,
    );
  } finally {
    await one.stop();
  }
  const app = benchApp({
    ZK_NAMESPACE: ns('steady'),
    JOBS: String(jobs),
    FIRING_JOBS: String(firing),
    JOB_CRON: '0 * * * * ?',
    LATENESS_ALL: 'true',
    JOB_TOTAL: String(total),
  });
  try {
    await app.waitForLine(/"event":"registered"/, 600_000);
    // The first firing shards the firing jobs: measured from the next minute on.
    await app.waitForLine(/"event":"lateness"/, 120_000);
    await sleep(Math.ceil(Date.now() / 60_000) * 60_000 + 30_000 - Date.now());
    const from = app.lines.length;
    const eldFrom = app.lines.length;
    app.send('eld'); // reset
    await app.waitForLine(/"event":"eld"/, 10_000, eldFrom);
    await sleep(minutes * 60_000);
    const askedAt = app.lines.length;
    app.send('eld');
    const eld = JSON.parse((await app.waitForLine(/"event":"eld"/, 10_000, askedAt)).slice(4)) as {
      p99: number;
      max: number;
    };
    const samples = app.lines
      .slice(from)
      .filter((line) => line.includes('"lateness"'))
      .map((line) => (JSON.parse(line.slice(4)) as { ms: number }).ms);
    return {
      p99: percentile(samples, 99),
      p50: percentile(samples, 50),
      samples: samples.length,
      eldP99: round(eld.p99),
      eldMax: round(eld.max),
      oneJobP99,
    };
  } finally {
    await app.stop();
  }
}

/** P processes with the same `jobs` jobs, JOB_TOTAL = P: time until every process has its items of every job. */
export async function scaleCluster(
  processes: number,
  jobs: number,
): Promise<{ allShardedMs: Figure; cpuMsPerProcess: Figure }> {
  const samples: number[] = [];
  const cpu: number[] = [];
  for (let r = 0; r < Math.min(ROUNDS, 2); r++) {
    const namespace = ns('cluster');
    const started = performance.now();
    const apps = Array.from({ length: processes }, () =>
      benchApp({ ZK_NAMESPACE: namespace, JOBS: String(jobs), JOB_TOTAL: String(processes) }),
    );
    const lines = await Promise.all(apps.map((a) => a.waitForLine(/"event":"sharded"/, 300_000)));
    samples.push(performance.now() - started);
    cpu.push(
      figure(
        lines.map((line) => (JSON.parse(line.slice(4)) as { cpuMs: number }).cpuMs),
        'ms',
      ).median,
    );
    await Promise.all(apps.map((a) => a.stop()));
  }
  return { allShardedMs: figure(samples, 'ms'), cpuMsPerProcess: figure(cpu, 'ms') };
}
