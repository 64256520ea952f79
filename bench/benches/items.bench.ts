/** Bench: one job of many items. Run by bench/run.ts. */
import { LineProcess } from '../../test/support/line-process.js';
import { type Figure, figure, ns, ROUNDS, zk } from '../support/bench-support.js';

/**
 * One job with `total` items on one instance (bench/fixtures/items-app.ts, a firing every 5 s): time from process
 * start until sharded, and per firing how long after the instant the first item started and the last one ended,
 * with RSS. At the documented maximum (MAX_SHARDING_TOTAL_COUNT) this shows what the maximum costs.
 */
export async function manyItems(
  total: number,
): Promise<{ shardedMs: Figure; firstStartMs: Figure; lastEndMs: Figure; rssMb: Figure }> {
  const sharded: number[] = [];
  const first: number[] = [];
  const last: number[] = [];
  const rss: number[] = [];
  for (let r = 0; r < Math.min(ROUNDS, 2); r++) {
    const app = new LineProcess(process.execPath, ['build/bench/fixtures/items-app.js'], {
      ...process.env,
      ZK_CONNECT: zk().connectString,
      ZK_NAMESPACE: ns('items'),
      JOB_TOTAL: String(total),
      JOB_CRON: '*/5 * * * * *',
    });
    try {
      const line = await app.waitForLine(/"event":"sharded"/, 120_000);
      sharded.push((JSON.parse(line.slice(4)) as { sinceStartMs: number }).sinceStartMs);
      let from = app.lines.length;
      for (let firing = 0; firing < 3; firing++) {
        const event = JSON.parse((await app.waitForLine(/"event":"firing"/, 60_000, from)).slice(4)) as {
          firstStartMs: number;
          lastEndMs: number;
          rss: number;
        };
        from = app.lines.findIndex((l, i) => i >= from && l.includes('"event":"firing"')) + 1;
        first.push(event.firstStartMs);
        last.push(event.lastEndMs);
        rss.push(event.rss / 2 ** 20);
      }
    } finally {
      await app.stop();
    }
  }
  return {
    shardedMs: figure(sharded, 'ms'),
    firstStartMs: figure(first, 'ms'),
    lastEndMs: figure(last, 'ms'),
    rssMb: figure(rss, 'MB'),
  };
}
