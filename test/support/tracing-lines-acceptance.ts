import type { AddressInfo } from 'node:net';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { expect } from 'vitest';
import {
  ElasticJobModule,
  ElasticJobRegistry,
  type ExecutionLines,
  type ExecutionLinesAnswer,
  ShardedJob,
  type ShardingContext,
} from '../../lib/index.js';
import { ElasticJobConsoleModule } from '../../lib/console/index.js';
import { appOptions } from './app.js';
import { hold } from './resources.js';
import type { TracedDatabase } from './tracing-acceptance.js';
import { eventually, uniqueNamespace } from './zk.js';

/**
 * What every SQL tracing store does with items' kept lines (`context.logger`, docs/guide/item-policies.md, "Item
 * logs"), whatever its database (tracing.spec.ts, tracing-mysql.spec.ts): written into our JOB_EXECUTION_LINES beside
 * ElasticJob's tables, read back through the console's lines route when the store is its `executionHistory`, and
 * kept through a database outage within the buffer. The apps here have no in-memory execution log
 * (`executionLog: false`): no instance keeps the lines, so what the console shows can only come from the store.
 */

/** Lines past the item logger's bound of 300. */
const LOGGED_PAST_BOUND = 400;

@Injectable()
class LoggingJob {
  @ShardedJob({ jobName: 'logging', cron: '0 0 0 1 1 *', shardingTotalCount: 3 })
  run(context: ShardingContext): void {
    if (context.shardingItem === 0) {
      context.logger.log('line one');
      context.logger.warn('区域 two ✓');
    } else if (context.shardingItem === 1) {
      for (let i = 0; i < LOGGED_PAST_BOUND; i++) context.logger.log(`line ${i}`);
    }
    // Item 2 logs nothing.
  }
}

let steadyRuns = 0;

@Injectable()
class SteadyLoggingJob {
  @ShardedJob({ jobName: 'steady-logging', cron: '* * * * * *', shardingTotalCount: 1 })
  run(context: ShardingContext): void {
    const run = ++steadyRuns;
    for (let i = 0; i < 3; i++) context.logger.log(`run ${run} line ${i}`);
  }
}

/** An HTTP app with `job`, the database's tracing and the console reading it as its history; closed after the test. */
async function bootConsoleApp(db: TracedDatabase, prefix: string, job: new () => object) {
  @Module({
    imports: [
      ElasticJobModule.forRoot(appOptions(uniqueNamespace(prefix), { executionLog: false })),
      ElasticJobConsoleModule.forRoot({ executionHistory: db.service }),
    ],
    providers: [job, db.provider({ flushIntervalMilliseconds: 100 })],
  })
  class LinesApp {}
  const app = await NestFactory.create(LinesApp, { logger: ['error'] });
  hold(() => app.close());
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  const linesOf = async (jobName: string, id: string): Promise<ExecutionLinesAnswer> => {
    const response = await fetch(
      `http://127.0.0.1:${port}/elastic-job/api/jobs/${jobName}/executions/${encodeURIComponent(id)}/lines`,
    );
    expect(response.status).toBe(200);
    return (await response.json()) as ExecutionLinesAnswer;
  };
  return { app, tracing: app.get(db.service), linesOf };
}

/**
 * A firing whose items log a few lines, more than the bound, and none: each execution's lines are written to the
 * store once its item completed, bounded as in memory (300 kept, the rest counted), and the console's lines route
 * answers them from the store.
 */
export async function expectLinesWrittenAndRead(db: TracedDatabase): Promise<void> {
  const { app, tracing, linesOf } = await bootConsoleApp(db, 'tracing-lines', LoggingJob);
  await app.get(ElasticJobRegistry).trigger('logging');
  const rows = await eventually(
    () => db.executions('logging'),
    (found) => found.length === 3 && found.every((row) => row.complete_time !== null),
    15_000,
    'three completed execution rows',
  );
  const idOf = (item: number) => rows.find((row) => row.sharding_item === item)!.id;
  // Written in the writer's pass that follows each completion.
  const stored = await eventually(
    () => Promise.all([0, 1].map((item) => tracing.executionLines('logging', idOf(item)))),
    (found) => found.every((lines) => lines !== undefined),
    15_000,
    'the lines of items 0 and 1 written',
  );
  const text = (kept: ExecutionLines | undefined) => kept?.lines.map((line) => [line.level, line.message]);
  expect(text(stored[0])).toEqual([
    ['log', 'line one'],
    ['warn', '区域 two ✓'],
  ]);
  expect(stored[1]!.lines).toHaveLength(300);
  expect(stored[1]!.dropped).toBe(LOGGED_PAST_BOUND - 300);
  expect(stored[1]!.lines[299]!.message).toBe('line 299');
  expect(stored[1]!.lines.every((line) => typeof line.at === 'number' && line.at <= Date.now())).toBe(true);

  // The console's route reads them from the store (no instance keeps them: the apps' execution log is off).
  const first = await linesOf('logging', idOf(0));
  expect(text(first.lines)).toEqual(text(stored[0]));
  expect(first.missing).toEqual([]);
  const second = await linesOf('logging', idOf(1));
  expect(second.lines!.lines).toHaveLength(300);
  expect(second.lines!.dropped).toBe(100);
  // An item that logged nothing has no row: the route asks the instances, which keep none either.
  expect(await tracing.executionLines('logging', idOf(2))).toBeUndefined();
  expect((await linesOf('logging', idOf(2))).lines).toBeUndefined();
  // Another job's name does not read this job's lines.
  expect(await tracing.executionLines('other-job', idOf(0))).toBeUndefined();
}

/**
 * A database that stops for a few firings of a job whose item logs three lines each, and comes back: within the
 * buffer's bounds, every firing's lines are written when it is back, nothing dropped, read back through the console.
 */
export async function expectLinesKeptThroughOutage(db: TracedDatabase): Promise<void> {
  steadyRuns = 0;
  const { tracing, linesOf } = await bootConsoleApp(db, 'tracing-lines-outage', SteadyLoggingJob);
  await eventually(
    () => db.executions('steady-logging'),
    (found) => found.some((row) => row.complete_time !== null),
    15_000,
    'rows before the outage',
  );
  await db.stop();
  const runsAtStop = steadyRuns;
  await eventually(
    () => ({ runs: steadyRuns, buffered: tracing.stats.buffered }),
    ({ runs, buffered }) => runs >= runsAtStop + 3 && buffered > 0,
    20_000,
    'three firings during the outage',
  );
  await db.start();
  const runsAtRestart = steadyRuns;
  await eventually(
    () => tracing.stats.buffered,
    (buffered) => buffered === 0,
    40_000,
    'the backlog written',
  );
  const completed = (await db.executions('steady-logging')).filter((row) => row.complete_time !== null);
  expect(completed.length).toBeGreaterThanOrEqual(runsAtRestart);
  // Every completed execution's lines, those of the outage's firings included, are in the store.
  const runs = new Set<string>();
  for (const row of completed) {
    const kept = await tracing.executionLines('steady-logging', row.id);
    expect(kept?.lines.map((line) => line.message.replace(/^run \d+ /, ''))).toEqual(['line 0', 'line 1', 'line 2']);
    runs.add(kept!.lines[0]!.message.split(' line')[0]!);
  }
  expect(runs.size).toBe(completed.length); // each execution's own lines
  for (let run = runsAtStop + 1; run <= runsAtRestart; run++) expect(runs.has(`run ${run}`)).toBe(true);
  expect(tracing.stats.dropped).toBe(0);
  const last = completed[completed.length - 1]!;
  expect((await linesOf('steady-logging', last.id)).lines?.lines).toHaveLength(3);
}
