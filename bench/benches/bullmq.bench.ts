/** Bench: BullMQ on issue 32's burst, a row beside ours. Run by bench/run.ts. */
import { LineProcess } from '../../test/support/line-process.js';
import { LocalRedis } from '../../test/support/local-redis.js';
import { percentile, quick, round, sleep } from '../support/bench-support.js';

const PERIOD_MS = 10_000;

/**
 * BullMQ's answer to a burst (bench/fixtures/bullmq-app.ts, or with `nest` bullmq-nest-app.ts: the same inside a
 * Nest application context through @nestjs/bullmq; on a throwaway local Redis: Debian's redis-server with its
 * defaults): `tasks` job schedulers all due at the same instant every 10 s, one worker at concurrency 100, in a
 * process of its own. Lateness of every start against its scheduled instant: the first instant after ready (the
 * first every scheduler has: "the first firing after start-up") apart, then `quick ? 1 : 3` periods after it; RSS
 * sampled after them.
 */
export async function bullmqBurst(
  tasks = 2000,
  options: { nest?: boolean } = {},
): Promise<{
  /** The first instant after ready. */
  firstP99: number;
  p50: number;
  p99: number;
  samples: number;
  /** Starts of the steady instants that never came (instants the worker skipped). */
  missing: number;
  readyMs: number;
  rssMb: number;
  /** RSS right after a full collection (see burst.bench.ts). */
  rssAfterGcMb: number;
}> {
  const periods = quick ? 1 : 3;
  const redis = await LocalRedis.create();
  const fixture = options.nest ? 'bullmq-nest-app' : 'bullmq-app';
  const app = new LineProcess(process.execPath, ['--expose-gc', `build/bench/fixtures/${fixture}.js`], {
    ...process.env,
    REDIS_URL: redis.url,
    TASKS: String(tasks),
    EVERY_MS: String(PERIOD_MS),
    CONCURRENCY: '100',
  });
  try {
    const ready = JSON.parse((await app.waitForLine(/"event":"ready"/, 120_000)).slice(4)) as { sinceStartMs: number };
    // The first instant after ready is the first every scheduler has (some upserted before an earlier instant
    // may have run already): measured apart, as the first firing after start-up. The next `periods` instants are
    // the steady ones.
    const first = Math.floor(Date.now() / PERIOD_MS) * PERIOD_MS + PERIOD_MS;
    const measured = Array.from({ length: periods }, (_, i) => first + (i + 1) * PERIOD_MS);
    // Each measured instant's starts get the period that follows it; a burst running longer is waited for, a while.
    const last = measured[measured.length - 1]!;
    await sleep(last + PERIOD_MS - Date.now());
    const collect = (due: ReadonlySet<number>): number[] =>
      app.lines
        .filter((line) => line.includes('"lateness"'))
        .map((line) => JSON.parse(line.slice(4)) as { ms: number; due: number })
        .filter((event) => due.has(event.due))
        .map((event) => event.ms);
    const due = new Set(measured);
    let samples = collect(due);
    for (let waited = 0; samples.length < tasks * periods && waited < 6 * PERIOD_MS; waited += 1000) {
      await sleep(1000);
      samples = collect(due);
    }
    // A worker behind its schedule skips instants (a scheduler's next job is made when its last one is taken): the
    // starts that never came are told beside the figures, which a failure would hide.
    const missing = tasks * periods - samples.length;
    const askedAt = app.lines.length;
    app.send('rss');
    const rss = (JSON.parse((await app.waitForLine(/"event":"rss"/, 10_000, askedAt)).slice(4)) as { rss: number }).rss;
    const collectedAt = app.lines.length;
    app.send('mem');
    const collected = JSON.parse((await app.waitForLine(/"event":"mem"/, 10_000, collectedAt)).slice(4)) as {
      rss: number;
    };
    const firstSamples = collect(new Set([first]));
    return {
      firstP99: firstSamples.length > 0 ? percentile(firstSamples, 99) : Number.NaN,
      p50: percentile(samples, 50),
      p99: percentile(samples, 99),
      samples: samples.length,
      missing,
      readyMs: ready.sinceStartMs,
      rssMb: round(rss / 2 ** 20),
      rssAfterGcMb: round(collected.rss / 2 ** 20),
    };
  } finally {
    await app.stop();
    await redis.stop();
  }
}
