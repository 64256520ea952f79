import { Injectable, type INestApplicationContext, Logger, type Provider, type Type } from '@nestjs/common';
import { expect, vi } from 'vitest';
import {
  ElasticJobRegistry,
  type ExecutionRecord,
  ShardedJob,
  type ShardingContext,
  type TraceWriterOptions,
} from '../../lib/index.js';
import type { TracingService } from '../../lib/tracing/tracing-service.js';
import { appOptions, bootApp } from './app.js';
import { hold } from './resources.js';
import { eventually, uniqueNamespace } from './zk.js';

/**
 * What every SQL tracing store must do, whatever its database (tracing.spec.ts for PostgreSQL, tracing-mysql.spec.ts
 * for MySQL): each firing written as ElasticJob writes it, the console's queries answered, texts cut to their
 * columns, and a database outage survived within the buffer's bounds. Each spec file gives its database as a
 * TracedDatabase and keeps its dialect's own checks (tables, ElasticJob's SELECTs) beside these.
 */

export const LONG_MESSAGE = `region ap failed: ${'x'.repeat(4100)}`;

@Injectable()
export class TracedJob {
  @ShardedJob({ jobName: 'traced', cron: '0 0 0 1 1 *', shardingTotalCount: 3 })
  run(context: ShardingContext): void {
    if (context.shardingItem === 2) throw new Error(LONG_MESSAGE);
  }
}

@Injectable()
class WideJob {
  @ShardedJob({ jobName: 'wide', cron: '0 0 0 1 1 *', shardingTotalCount: 120 })
  run(): void {}
}

let steadyRuns = 0;
/** When each firing of SteadyJob ran (after its item.started event: its row's start_time is at or before it). */
let steadyRanAt: number[] = [];

@Injectable()
class SteadyJob {
  @ShardedJob({ jobName: 'steady', cron: '* * * * * *', shardingTotalCount: 1 })
  run(): void {
    steadyRuns++;
    steadyRanAt.push(Date.now());
  }
}

let wholeRuns = 0;

@Injectable()
class WholeJob {
  @ShardedJob({ jobName: 'whole', cron: '* * * * * *', shardingTotalCount: 1 })
  run(): void {
    wholeRuns++;
  }
}

/** A JOB_EXECUTION_LOG row as the test's own query reads it, in either dialect. */
export interface ExecutionRow {
  id: string;
  task_id: string;
  ip: string;
  sharding_item: number;
  execution_source: string;
  failure_cause: string | null;
  /** BOOLEAN (PostgreSQL) or INT (MySQL). */
  is_success: boolean | number;
  start_time: Date | null;
  complete_time: Date | null;
}

export interface TracedDatabase {
  /** The tracing provider on this database. */
  provider(options: TraceWriterOptions): Provider;
  /** What it provides. */
  service: Type<TracingService>;
  /** Stops the server (connections cut), and starts it again with its data. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** The job's execution rows by start time then item; none while the table does not exist yet. */
  executions(jobName: string): Promise<ExecutionRow[]>;
  /** The `sharding_item` column of the job's status rows. */
  statusItems(jobName: string): Promise<string[]>;
  /** The precision of its TIMESTAMP columns: 1 (PostgreSQL's microseconds) or 1000 (MySQL's seconds). */
  timestampMs: number;
}

/** Boots an app with `jobs` and the database's tracing; closed after the test. */
export async function bootTraced(
  db: TracedDatabase,
  prefix: string,
  jobs: Provider[],
  options: TraceWriterOptions = {},
): Promise<INestApplicationContext> {
  const app = await bootApp(appOptions(uniqueNamespace(prefix)), [
    ...jobs,
    db.provider({ flushIntervalMilliseconds: 100, ...options }),
  ]);
  hold(() => app.close());
  return app;
}

/** Fires TracedJob once and checks its three execution rows as ElasticJob writes them; resolves with its task id. */
export async function expectFiringWritten(db: TracedDatabase, app: INestApplicationContext): Promise<string> {
  const registry = app.get(ElasticJobRegistry);
  const me = registry.getJobStatus('traced').instanceId;
  const before = Date.now();
  await registry.trigger('traced');
  const rows = await eventually(
    () => db.executions('traced'),
    (found) => found.length === 3 && found.every((row) => row.complete_time !== null),
    15_000,
    'three completed execution rows',
  );
  const taskId = `traced@-@0,1,2@-@READY@-@${me}`;
  rows.sort((a, b) => a.sharding_item - b.sharding_item);
  expect(rows.map((row) => [row.sharding_item, Boolean(row.is_success), row.execution_source, row.task_id])).toEqual([
    [0, true, 'NORMAL_TRIGGER', taskId],
    [1, true, 'NORMAL_TRIGGER', taskId],
    [2, false, 'NORMAL_TRIGGER', taskId],
  ]);
  expect(rows[2]!.failure_cause).toHaveLength(4000); // truncated as ElasticJob does
  expect(rows[2]!.failure_cause!.startsWith(`Error: region ap failed: xxx`)).toBe(true);
  expect(rows[0]!.failure_cause).toBeNull();
  expect(rows[0]!.ip).toBe(me.split('@-@')[0]);
  // The instants written are this run's, whatever the zones (to the column's precision).
  expect(rows[0]!.start_time!.getTime()).toBeGreaterThanOrEqual(before - db.timestampMs);
  expect(rows[0]!.start_time!.getTime()).toBeLessThanOrEqual(rows[0]!.complete_time!.getTime());
  expect(rows[0]!.complete_time!.getTime()).toBeLessThanOrEqual(Date.now() + db.timestampMs);
  return taskId;
}

/**
 * Fires TracedJob twice in `app` (booted with it and the database's tracing) and checks the console's history
 * queries and their filters against what was written; resolves with the executions of the last minute.
 */
export async function expectHistoryQueriesFiltered(
  db: TracedDatabase,
  app: INestApplicationContext,
): Promise<ExecutionRecord[]> {
  const registry = app.get(ElasticJobRegistry);
  const tracing = app.get(db.service);
  const me = registry.getJobStatus('traced').instanceId;
  const before = (await db.executions('traced')).length; // an earlier test's job may have the same name
  await registry.trigger('traced');
  await eventually(
    () => db.executions('traced'),
    (found) => found.length === before + 3 && found.every((row) => row.complete_time !== null),
    15_000,
    'the first firing written',
  );
  // A whole TIMESTAMP step past any the first firing's rows can say (MySQL rounds seconds, MariaDB cuts them).
  const between = new Date(Math.floor(Date.now() / db.timestampMs) * db.timestampMs + 2 * db.timestampMs);
  await eventually(
    () => Date.now(),
    (now) => now >= between.getTime(),
    5_000,
    'the clock past the first firing',
  );
  await registry.trigger('traced');
  await eventually(
    () => db.executions('traced'),
    (found) => found.length === before + 6 && found.every((row) => row.complete_time !== null),
    15_000,
    'the second firing written',
  );
  const query = (extra: object) =>
    tracing.recentExecutions({ jobName: 'traced', from: new Date(Date.now() - 60_000), limit: 100, ...extra });
  const ours = await query({});
  expect(ours.length).toBeGreaterThanOrEqual(6);
  const items = (rows: Array<{ item: number }>) => rows.map((row) => row.item).sort();
  expect(items(await query({ result: 'failure' }))).toEqual(items(ours.filter((row) => row.success === false)));
  expect((await query({ result: 'failure' })).every((row) => row.item === 2)).toBe(true);
  expect((await query({ result: 'success' })).every((row) => row.success === true)).toBe(true);
  expect(await query({ result: 'running' })).toEqual([]);
  expect(items(await query({ item: 1, from: between }))).toEqual([1]);
  expect(await query({ instance: me })).toHaveLength(ours.length); // the table keeps the IP: the id matches it
  expect(await query({ instance: '10.9.9.9' })).toEqual([]);
  expect(items(await query({ from: between }))).toEqual([0, 1, 2]);
  expect(await query({ to: new Date(Date.now() - 3_600_000) })).toEqual([]);
  const page = await query({ offset: 4, limit: 2 });
  expect(page.map((row) => row.id)).toEqual(ours.slice(4, 6).map((row) => row.id));
  expect(await tracing.recentExecutions({ jobName: 'no-such-job', limit: 10 })).toEqual([]);
  return ours;
}

/**
 * A database that stops while a job fires every second and comes back: no firing held up, the newest events kept
 * within `maxBufferedEvents` and written when it is back, the drops counted, the outage logged once each way.
 */
export async function expectOutageSurvived(db: TracedDatabase): Promise<void> {
  steadyRuns = 0;
  steadyRanAt = [];
  const app = await bootTraced(db, 'tracing-outage', [SteadyJob], { maxBufferedEvents: 30 });
  const tracing = app.get(db.service);
  await eventually(
    () => db.executions('steady'),
    (found) => found.length >= 2,
    15_000,
    'rows before the outage',
  );

  // The outage is logged once when it goes and once when it is back, whatever fails meanwhile (issue 27).
  const warnings = vi.spyOn(Logger.prototype, 'warn');
  const logs = vi.spyOn(Logger.prototype, 'log');
  hold(() => [warnings, logs].forEach((spy) => spy.mockRestore()));
  const said = (spy: typeof logs, pattern: RegExp): string[] =>
    spy.mock.calls.map((call) => String(call[0])).filter((line) => pattern.test(line));
  await db.stop();
  const stoppedAt = Date.now();
  const runsAtStop = steadyRuns;
  // Events still waiting for a slow database (a loaded host's) when it stopped: fewer firings then fill the buffer.
  const bufferedAtStop = tracing.stats.buffered;
  // Each firing makes 5 events (start, completion, 3 status rows): 30 fill the buffer in about 6 s. Two firings'
  // events past it: were the newest dropped, at least one firing's row would be missing (checked below).
  await eventually(
    () => tracing.stats.dropped,
    (dropped) => dropped >= 10,
    25_000,
    'the buffer overflowing by two firings',
  );
  // Firings went on: the 40 events that filled the buffer and overflowed it, less those held at the stop, are 5 a
  // firing (less one firing under way at the stop, and one whose batch was being written then). Counted, not timed.
  expect(steadyRuns - runsAtStop).toBeGreaterThanOrEqual(Math.ceil((40 - bufferedAtStop) / 5) - 2);
  expect(tracing.stats.buffered).toBe(30);
  await db.start();
  const restartedAt = Date.now();

  await eventually(
    () => tracing.stats.buffered,
    (buffered) => buffered === 0,
    40_000,
    'the backlog written',
  );
  // Rows started within the outage (half a TIMESTAMP step's margin each side).
  const margin = db.timestampMs / 2;
  const duringOutage = (await db.executions('steady')).filter(
    (row) => row.start_time!.getTime() > stoppedAt + margin && row.start_time!.getTime() < restartedAt - margin,
  );
  // The newest events of the outage were kept: about 30 / 5 firings' rows, complete.
  expect(duringOutage.length).toBeGreaterThanOrEqual(4);
  expect(duringOutage.every((row) => row.complete_time !== null && Boolean(row.is_success))).toBe(true);
  // Newest, not merely some: only the oldest went, so every firing after the first one kept has its row (a firing
  // dropped after it, say the outage's last ones, would leave more firings than rows from there on for good). A
  // TIMESTAMP step past it: a cut start_time (MariaDB) must not count the firing before it.
  const firstKept = duringOutage[0]!.start_time!.getTime();
  await eventually(
    async () => ({
      rows: (await db.executions('steady')).filter((row) => row.start_time!.getTime() >= firstKept).length,
      firings: steadyRanAt.filter((ranAt) => ranAt >= firstKept + db.timestampMs).length,
    }),
    ({ rows, firings }) => rows >= firings,
    15_000,
    'a row for every firing from the first one kept in the outage',
  );
  expect(tracing.stats.dropped).toBeGreaterThan(0);
  expect(said(warnings, /the tracing database/)).toEqual([
    expect.stringMatching(/^the tracing database is unavailable: .*; \d+ event\(s\) wait, writing is retried/),
  ]);
  expect(said(logs, /the tracing database/)).toEqual([
    expect.stringMatching(
      /^the tracing database is available again after [\d.]+ s: \d+ write\(s\) failed while it was away; backlog written; \d+ event\(s\) were dropped/,
    ),
  ]);
}

/**
 * A database that stops for a few firings and comes back, within the buffer's bounds: every firing's rows are
 * written when it is back, nothing dropped.
 */
export async function expectNothingLostInOutage(db: TracedDatabase): Promise<void> {
  wholeRuns = 0;
  const app = await bootTraced(db, 'tracing-whole', [WholeJob]);
  const tracing = app.get(db.service);
  await eventually(
    () => db.executions('whole'),
    (found) => found.length >= 1,
    15_000,
    'rows before the outage',
  );
  await db.stop();
  const runsAtStop = wholeRuns;
  // Writes fail meanwhile (the backoff passes) while the job fires on.
  await eventually(
    () => ({ runs: wholeRuns, buffered: tracing.stats.buffered }),
    ({ runs, buffered }) => runs >= runsAtStop + 3 && buffered > 0,
    20_000,
    'three firings during the outage',
  );
  await db.start();
  const runsAtRestart = wholeRuns;
  await eventually(
    () => tracing.stats.buffered,
    (buffered) => buffered === 0,
    40_000,
    'the backlog written',
  );
  const rows = await db.executions('whole');
  // Every firing up to the restart has its row, complete (a firing after it may still run).
  expect(rows.length).toBeGreaterThanOrEqual(runsAtRestart);
  expect(rows.slice(0, runsAtRestart).every((row) => row.complete_time !== null && Boolean(row.is_success))).toBe(true);
  expect(new Set(rows.map((row) => row.id)).size).toBe(rows.length);
  expect((await db.statusItems('whole')).length).toBeGreaterThanOrEqual(3 * runsAtRestart);
  expect(tracing.stats.dropped).toBe(0);
}

/** A firing of 120 items, whose task id and item list are longer than their columns, is written whole, cut. */
export async function expectTextsCut(db: TracedDatabase): Promise<void> {
  const app = await bootTraced(db, 'tracing-wide', [WideJob]);
  const tracing = app.get(db.service);
  await app.get(ElasticJobRegistry).trigger('wide');
  const rows = await eventually(
    () => db.executions('wide'),
    (found) => found.length === 120 && found.every((row) => row.complete_time !== null),
    15_000,
    '120 completed rows',
  );
  expect(rows[0]!.task_id).toHaveLength(255);
  // The firing's status rows (staging, running, finished) are written on their own: the last one after the items'
  // rows may be (a loaded run read two).
  const statuses = await eventually(
    () => db.statusItems('wide'),
    (found) => found.length >= 3,
    15_000,
    'three status rows',
  );
  expect(statuses.length).toBe(3);
  expect(statuses.every((items) => items.length === 100 && items.startsWith('[0, 1, 2'))).toBe(true);
  expect(tracing.stats.dropped).toBe(0);
}
