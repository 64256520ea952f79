/** Bench: firing lateness against @nestjs/schedule. Run by bench/run.ts. */
import { type Figure, figure, percentile, sleep, ns, ROUNDS, quick, benchApp } from '../support/bench-support.js';

export async function lateness(): Promise<{ ours: Figure; schedule: Figure; oursP50: Figure; scheduleP50: Figure }> {
  const app = benchApp({
    ZK_NAMESPACE: ns('lateness'),
    JOBS: '1',
    JOB_TOTAL: '1',
    WITH_SCHEDULE: 'true',
    MONITOR: 'true',
  });
  await app.waitForLine(/"event":"sharded"/, 60_000);
  await sleep(1500);
  const perRound = quick ? 5_000 : 10_000;
  const ours: number[] = [];
  const schedule: number[] = [];
  const ours50: number[] = [];
  const schedule50: number[] = [];
  for (let r = 0; r < Math.min(ROUNDS, 3); r++) {
    const from = app.lines.length;
    await sleep(perRound);
    const fresh = app.lines
      .slice(from)
      .filter((l) => l.includes('"lateness"'))
      .map((l) => JSON.parse(l.slice(4)) as { source: string; ms: number });
    const o = fresh.filter((e) => e.source === 'elastic-job').map((e) => e.ms);
    const s = fresh.filter((e) => e.source === '@nestjs/schedule').map((e) => e.ms);
    ours.push(percentile(o, 99));
    schedule.push(percentile(s, 99));
    ours50.push(percentile(o, 50));
    schedule50.push(percentile(s, 50));
  }
  app.kill('SIGKILL');
  return {
    ours: figure(ours, 'ms'),
    schedule: figure(schedule, 'ms'),
    oursP50: figure(ours50, 'ms'),
    scheduleP50: figure(schedule50, 'ms'),
  };
}
