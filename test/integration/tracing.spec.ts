import { Injectable, Logger } from '@nestjs/common';
import { Pool } from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ElasticJobRegistry, JobConfigurationError, ShardedJob, type ShardingContext } from '../../lib/index.js';
import {
  ElasticJobPostgresTracing,
  postgresTracing,
  validatePostgresTracingOptions,
} from '../../lib/postgres/index.js';
import { appOptions, bootApp } from '../support/app.js';
import { LocalPostgres } from '../support/local-postgres.js';
import { hold, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace } from '../support/zk.js';

/**
 * Tracing into a real PostgreSQL server (Debian's, started here on a free port with its own data dir): ElasticJob's
 * two tables and write rules, and a database that stops and comes back while jobs fire.
 */

let database: LocalPostgres;
/** The test's own reads (a pool: its connections die with the server and are made again after). */
let client: Pool;

beforeAll(async () => {
  database = await LocalPostgres.create();
  client = new Pool({ connectionString: database.connectionString, max: 1 });
  client.on('error', () => undefined);
});

afterAll(async () => {
  await client?.end().catch(() => undefined);
  await database?.destroy();
});

afterEach(async () => {
  await releaseAll();
});

const LONG_MESSAGE = `region ap failed: ${'x'.repeat(4100)}`;

@Injectable()
class TracedJob {
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

@Injectable()
class SteadyJob {
  @ShardedJob({ jobName: 'steady', cron: '* * * * * *', shardingTotalCount: 1 })
  run(): void {
    steadyRuns++;
  }
}

interface ExecutionRow {
  id: string;
  task_id: string;
  hostname: string;
  ip: string;
  sharding_item: number;
  execution_source: string;
  failure_cause: string | null;
  is_success: boolean;
  start_time: Date | null;
  complete_time: Date | null;
}

/** The job's rows; none while the table does not exist yet (the tracer makes it at its first write). */
async function executions(jobName: string): Promise<ExecutionRow[]> {
  try {
    return (
      await client.query<ExecutionRow>('SELECT * FROM job_execution_log WHERE job_name = $1 ORDER BY start_time', [
        jobName,
      ])
    ).rows;
  } catch (error) {
    if ((error as { code?: string }).code === '42P01') return [];
    throw error;
  }
}

describe('tracing into PostgreSQL', () => {
  it("creates ElasticJob's tables and writes each item and firing as ElasticJob does", async () => {
    const app = await bootApp(appOptions(uniqueNamespace('tracing')), [
      TracedJob,
      postgresTracing({ connectionString: database.connectionString, flushIntervalMilliseconds: 100 }),
    ]);
    hold(() => app.close());
    const registry = app.get(ElasticJobRegistry);
    const me = registry.getJobStatus('traced').instanceId;
    await registry.trigger('traced');

    const rows = await eventually(
      () => executions('traced'),
      (found) => found.length === 3 && found.every((row) => row.complete_time !== null),
      15_000,
      'three completed execution rows',
    );
    const taskId = `traced@-@0,1,2@-@READY@-@${me}`;
    rows.sort((a, b) => a.sharding_item - b.sharding_item);
    expect(rows.map((row) => [row.sharding_item, row.is_success, row.execution_source, row.task_id])).toEqual([
      [0, true, 'NORMAL_TRIGGER', taskId],
      [1, true, 'NORMAL_TRIGGER', taskId],
      [2, false, 'NORMAL_TRIGGER', taskId],
    ]);
    expect(rows[2]!.failure_cause).toHaveLength(4000); // truncated as ElasticJob does
    expect(rows[2]!.failure_cause!.startsWith(`Error: region ap failed: xxx`)).toBe(true);
    expect(rows[0]!.failure_cause).toBeNull();
    expect(rows[0]!.ip).toBe(me.split('@-@')[0]);
    expect(rows[0]!.start_time!.getTime()).toBeLessThanOrEqual(rows[0]!.complete_time!.getTime());

    const statuses = await eventually(
      async () =>
        (
          await client.query<{ state: string; sharding_item: string; message: string; slave_id: string }>(
            'SELECT state, sharding_item, message, slave_id FROM job_status_trace_log WHERE task_id = $1 ' +
              'ORDER BY creation_time, state',
            [taskId],
          )
        ).rows,
      (found) => found.length === 3,
      10_000,
      'three status rows',
    );
    expect(statuses.map((row) => row.state).sort()).toEqual(['TASK_ERROR', 'TASK_RUNNING', 'TASK_STAGING']);
    expect(statuses.every((row) => row.sharding_item === '[0, 1, 2]' && row.slave_id === me.split('@-@')[0])).toBe(
      true,
    );
    const error = statuses.find((row) => row.state === 'TASK_ERROR')!;
    expect(error.message.startsWith('{2=Error: region ap failed: ')).toBe(true);
    expect(error.message).toHaveLength(4000);
    const tables = (
      await client.query<{ indexname: string }>(
        "SELECT indexname FROM pg_indexes WHERE tablename = 'job_status_trace_log' ORDER BY indexname",
      )
    ).rows.map((row) => row.indexname);
    expect(tables).toEqual(['job_status_trace_log_pkey', 'task_id_state_index']);
  });

  it("answers the console's history queries with their filters: job, item, instance, result, time range, pages", async () => {
    const app = await bootApp(appOptions(uniqueNamespace('tracing-query')), [
      TracedJob,
      postgresTracing({ connectionString: database.connectionString, flushIntervalMilliseconds: 100 }),
    ]);
    hold(() => app.close());
    const registry = app.get(ElasticJobRegistry);
    const tracing = app.get(ElasticJobPostgresTracing);
    const me = registry.getJobStatus('traced').instanceId;
    const before = (await executions('traced')).length; // the first test's job has the same name
    await registry.trigger('traced');
    await eventually(
      () => executions('traced'),
      (found) => found.length === before + 3 && found.every((row) => row.complete_time !== null),
      15_000,
      'the first firing written',
    );
    const between = new Date();
    await registry.trigger('traced');
    await eventually(
      () => executions('traced'),
      (found) => found.length === before + 6 && found.every((row) => row.complete_time !== null),
      15_000,
      'the second firing written',
    );
    const query = (extra: object) =>
      tracing.recentExecutions({ jobName: 'traced', from: new Date(Date.now() - 60_000), limit: 100, ...extra });
    const ours = await query({});
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
  });

  it('never holds a firing up while the database is away; the backlog is written when it is back, drops counted', async () => {
    steadyRuns = 0;
    const app = await bootApp(appOptions(uniqueNamespace('tracing-outage')), [
      SteadyJob,
      postgresTracing({
        connectionString: database.connectionString,
        flushIntervalMilliseconds: 100,
        maxBufferedEvents: 30,
      }),
    ]);
    hold(() => app.close());
    const tracing = app.get(ElasticJobPostgresTracing);
    await eventually(
      () => executions('steady'),
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
    await database.stop();
    const stoppedAt = Date.now();
    const runsAtStop = steadyRuns;
    // Each firing makes 5 events (start, completion, 3 status rows): 30 fill the buffer in about 6 s.
    await eventually(
      () => tracing.stats.dropped,
      (dropped) => dropped > 0,
      20_000,
      'the buffer overflowing',
    );
    expect(steadyRuns - runsAtStop).toBeGreaterThanOrEqual(6); // firings went on, one a second
    expect(tracing.stats.buffered).toBe(30);
    await database.start();
    const restartedAt = Date.now();

    await eventually(
      () => tracing.stats.buffered,
      (buffered) => buffered === 0,
      40_000,
      'the backlog written',
    );
    const duringOutage = (await executions('steady')).filter(
      (row) => row.start_time!.getTime() > stoppedAt && row.start_time!.getTime() < restartedAt,
    );
    // The newest events of the outage were kept: about 30 / 5 firings' rows, complete.
    expect(duringOutage.length).toBeGreaterThanOrEqual(4);
    expect(duringOutage.every((row) => row.complete_time !== null && row.is_success)).toBe(true);
    expect(tracing.stats.dropped).toBeGreaterThan(0);
    expect(said(warnings, /the tracing database/)).toEqual([
      expect.stringMatching(/^the tracing database is unavailable: .*; \d+ event\(s\) wait, writing is retried/),
    ]);
    expect(said(logs, /the tracing database/)).toEqual([
      expect.stringMatching(
        /^the tracing database is available again after [\d.]+ s: \d+ write\(s\) failed while it was away; backlog written; \d+ event\(s\) were dropped/,
      ),
    ]);
  });

  it('cuts every text to its column: a firing of 120 items (task id and item list longer than their columns) is written', async () => {
    const app = await bootApp(appOptions(uniqueNamespace('tracing-wide')), [
      WideJob,
      postgresTracing({ connectionString: database.connectionString, flushIntervalMilliseconds: 100 }),
    ]);
    hold(() => app.close());
    const tracing = app.get(ElasticJobPostgresTracing);
    await app.get(ElasticJobRegistry).trigger('wide');
    const rows = await eventually(
      () => executions('wide'),
      (found) => found.length === 120 && found.every((row) => row.complete_time !== null),
      15_000,
      '120 completed rows',
    );
    expect(rows[0]!.task_id).toHaveLength(255);
    const statuses = (
      await client.query<{ sharding_item: string }>(
        "SELECT sharding_item FROM job_status_trace_log WHERE job_name = 'wide'",
      )
    ).rows;
    expect(statuses.length).toBe(3);
    expect(statuses.every((row) => row.sharding_item.length === 100 && row.sharding_item.startsWith('[0, 1, 2'))).toBe(
      true,
    );
    expect(tracing.stats.dropped).toBe(0);
  });

  it('refuses bad options with a typed error naming the field', () => {
    expect(() => validatePostgresTracingOptions({})).toThrow(JobConfigurationError);
    expect(() => validatePostgresTracingOptions({})).toThrow(/tracing\.postgres\.connectionString/);
    expect(() => postgresTracing({ connectionString: 'postgres://x', batchSize: 0 })).toThrow(
      /tracing\.postgres\.batchSize.*must be an integer > 0/,
    );
  });
});
