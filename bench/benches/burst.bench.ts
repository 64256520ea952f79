/**
 * Issue 32's burst: a thousand jobs of two items in one process, monitorExecution on, all firing at the same instant
 * every 10 seconds (the BullMQ row's 2000 tasks every 10 s, bullmq.bench.ts), against one job alone in the same run.
 * Lateness is every item's start after its instant. The first burst after ready (every job registered) is measured
 * apart (issue 43's "first firing", which sharded every job until the leader sharded at registration), as is the
 * first one the loop measures after it (the preparation lead has learnt from few bursts), then the following ones
 * together.
 */
import { benchApp, ns, percentile, quick, sleep } from '../support/bench-support.js';
import type { LineProcess } from '../../test/support/line-process.js';

const PERIOD_MS = 10_000;

export interface BurstFigures {
  /** Over the bursts after the first measured one. */
  p50: number;
  p99: number;
  max: number;
  samples: number;
  bursts: number;
  /** The first burst after ready (issue 43's "first firing": it sharded every job before issue 43). */
  startupP99: number;
  /** The first burst after that one. */
  firstP99: number;
  /** One job of two items alone, same run. */
  oneJobP99: number;
  /** Event-loop delay over the measured bursts. */
  eldP99: number;
  eldMax: number;
  /** From the process's start to every job registered, its trigger armed. */
  readyMs: number;
  /** RSS after the measured bursts, MB. */
  rssMb: number;
  /**
   * RSS right after a full collection, MB: what is kept, without the old generation's garbage, whose amount depends on
   * where in V8's collection cycle a single reading lands (tens of MB; docs/benchmarks.md, issue 43).
   */
  rssAfterGcMb: number;
  /**
   * JavaScript heap bytes allocated over the measured bursts per item start (the app's `alloc`, from V8's GC
   * statistics: collected objects included, load-insensitive), the idle process's between bursts included.
   */
  allocatedPerStartBytes: number;
}

const latenessOf = (lines: readonly string[]): number[] =>
  lines.filter((line) => line.includes('"lateness"')).map((line) => (JSON.parse(line.slice(4)) as { ms: number }).ms);

/** Asks the app for a figure and resolves with its answer. */
async function ask<T>(app: LineProcess, command: string, event: string): Promise<T> {
  const at = app.lines.length;
  app.send(command);
  return JSON.parse((await app.waitForLine((line) => line.includes(`"event":"${event}"`), 10_000, at)).slice(4)) as T;
}

/** Item-start lateness of every burst measured, in order, and the heap bytes allocated over them all. */
async function bursts(app: LineProcess, count: number): Promise<{ lateness: number[][]; allocated: number }> {
  await app.waitForLine(/"event":"lateness"/, 120_000); // a burst has run
  // From the middle of a period on: each window of PERIOD_MS holds one whole burst.
  await sleep(Math.ceil(Date.now() / PERIOD_MS) * PERIOD_MS + PERIOD_MS / 2 - Date.now());
  await ask(app, 'alloc', 'alloc'); // the count starts here
  const all: number[][] = [];
  for (let burst = 0; burst < count; burst++) {
    const from = app.lines.length;
    await sleep(PERIOD_MS);
    all.push(latenessOf(app.lines.slice(from)));
  }
  const { bytes } = await ask<{ bytes: number }>(app, 'alloc', 'alloc');
  return { lateness: all, allocated: bytes };
}

/**
 * The first firing after start-up: the burst of the first instant after ready (every job registered), as BullMQ's
 * is the first instant after its schedulers are upserted (bullmq.bench.ts). Bursts at instants while jobs still
 * registered are not it: part of the jobs fire while the others register.
 */
async function firstBurstAfterReady(app: LineProcess): Promise<number[]> {
  const first = Math.ceil(Date.now() / PERIOD_MS) * PERIOD_MS;
  // Half a period either side of the instant: an earlier instant's starts are in before, this one's by the end.
  await sleep(first - PERIOD_MS / 2 - Date.now());
  const from = app.lines.length;
  await sleep(first + PERIOD_MS / 2 - Date.now());
  return latenessOf(app.lines.slice(from));
}

function burstApp(jobs: number): LineProcess {
  return benchApp({
    ZK_NAMESPACE: ns(`burst${jobs}`),
    JOBS: String(jobs),
    JOB_TOTAL: '2',
    JOB_CRON: '0/10 * * * * ?',
    LATENESS_ALL: 'true',
    LATENESS_EVERY_ITEM: 'true',
    LATENESS_PERIOD_MS: String(PERIOD_MS),
  });
}

export async function burstAtInstant(jobs = 1000): Promise<BurstFigures> {
  const one = burstApp(1);
  let oneJobP99: number;
  try {
    oneJobP99 = percentile((await bursts(one, 3)).lateness.flat(), 99);
  } finally {
    await one.stop();
  }
  const app = burstApp(jobs);
  try {
    const registered = JSON.parse((await app.waitForLine(/"event":"registered"/, 600_000)).slice(4)) as {
      sinceStartMs: number;
    };
    // The first burst after ready apart (issue 43's first firing); the loop's figures are the later ones.
    const startup = await firstBurstAfterReady(app);
    const eldFrom = app.lines.length;
    app.send('eld'); // reset: the loop's delay over the measured bursts
    await app.waitForLine(/"event":"eld"/, 10_000, eldFrom);
    const { lateness: measured, allocated } = await bursts(app, quick ? 4 : 10);
    const askedAt = app.lines.length;
    app.send('eld');
    const eld = JSON.parse((await app.waitForLine(/"event":"eld"/, 10_000, askedAt)).slice(4)) as {
      p99: number;
      max: number;
    };
    const rssAt = app.lines.length;
    app.send('rss');
    const rss = JSON.parse((await app.waitForLine(/"event":"rss"/, 10_000, rssAt)).slice(4)) as { rss: number };
    const collectedAt = app.lines.length;
    app.send('mem');
    const collected = JSON.parse((await app.waitForLine(/"event":"mem"/, 10_000, collectedAt)).slice(4)) as {
      rss: number;
    };
    const [first = [], ...rest] = measured;
    const samples = rest.flat();
    return {
      startupP99: percentile(startup, 99),
      p50: percentile(samples, 50),
      p99: percentile(samples, 99),
      max: Math.max(...samples),
      samples: samples.length,
      bursts: rest.length,
      firstP99: percentile(first, 99),
      oneJobP99,
      eldP99: Math.round(eld.p99 * 10) / 10,
      eldMax: Math.round(eld.max * 10) / 10,
      readyMs: registered.sinceStartMs,
      rssMb: Math.round(rss.rss / 2 ** 20),
      rssAfterGcMb: Math.round(collected.rss / 2 ** 20),
      allocatedPerStartBytes: Math.round(allocated / Math.max(1, measured.flat().length)),
    };
  } finally {
    await app.stop();
  }
}
