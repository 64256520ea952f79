import { Pool } from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JobConfigurationError } from '../../lib/index.js';
import {
  ElasticJobPostgresTracing,
  postgresTracing,
  validatePostgresTracingOptions,
} from '../../lib/postgres/index.js';
import { LocalPostgres } from '../support/local-postgres.js';
import { releaseAll } from '../support/resources.js';
import {
  bootTraced,
  type ExecutionRow,
  expectFiringWritten,
  expectHistoryQueriesFiltered,
  expectOutageSurvived,
  expectNothingLostInOutage,
  type TracedDatabase,
  TracedJob,
  expectTextsCut,
} from '../support/tracing-acceptance.js';
import { expectLinesKeptThroughOutage, expectLinesWrittenAndRead } from '../support/tracing-lines-acceptance.js';
import { eventually } from '../support/zk.js';

/**
 * Tracing into a real PostgreSQL server (Debian's, started here on a free port with its own data dir): ElasticJob's
 * two tables and write rules, and a database that stops and comes back while jobs fire (the acceptance every SQL
 * store passes: test/support/tracing-acceptance.ts).
 */

let database: LocalPostgres;
/** The test's own reads (a pool: its connections die with the server and are made again after). */
let client: Pool;

const postgres: TracedDatabase = {
  provider: (options) => postgresTracing({ connectionString: database.connectionString, ...options }),
  service: ElasticJobPostgresTracing,
  stop: () => database.stop(),
  start: () => database.start(),
  async executions(jobName) {
    try {
      return (
        await client.query<ExecutionRow>(
          'SELECT * FROM job_execution_log WHERE job_name = $1 ORDER BY start_time, sharding_item',
          [jobName],
        )
      ).rows;
    } catch (error) {
      if ((error as { code?: string }).code === '42P01') return [];
      throw error;
    }
  },
  async statusItems(jobName) {
    const result = await client.query<{ sharding_item: string }>(
      'SELECT sharding_item FROM job_status_trace_log WHERE job_name = $1',
      [jobName],
    );
    return result.rows.map((row) => row.sharding_item);
  },
  timestampMs: 1,
};

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

describe('tracing into PostgreSQL', () => {
  it("creates ElasticJob's tables and writes each item and firing as ElasticJob does", async () => {
    const app = await bootTraced(postgres, 'tracing', [TracedJob]);
    const taskId = await expectFiringWritten(postgres, app);
    const me = taskId.split('@-@READY@-@')[1]!;

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
    await expectHistoryQueriesFiltered(postgres, await bootTraced(postgres, 'tracing-query', [TracedJob]));
  });

  it('never holds a firing up while the database is away; the backlog is written when it is back, drops counted', async () => {
    await expectOutageSurvived(postgres);
  });

  it('loses nothing while the database is away within the buffer: every firing is written when it is back', async () => {
    await expectNothingLostInOutage(postgres);
  });

  it('cuts every text to its column: a firing of 120 items (task id and item list longer than their columns) is written', async () => {
    await expectTextsCut(postgres);
  });

  it("writes items' kept lines into JOB_EXECUTION_LINES, bounded; the console's lines route reads them from it", async () => {
    await expectLinesWrittenAndRead(postgres);
  });

  it("keeps items' lines through a database outage within the buffer: every firing's lines written when it is back", async () => {
    await expectLinesKeptThroughOutage(postgres);
  });

  it('refuses bad options with a typed error naming the field', () => {
    expect(() => validatePostgresTracingOptions({})).toThrow(JobConfigurationError);
    expect(() => validatePostgresTracingOptions({})).toThrow(/tracing\.postgres\.connectionString/);
    expect(() => postgresTracing({ connectionString: 'postgres://x', batchSize: 0 })).toThrow(
      /tracing\.postgres\.batchSize.*must be an integer > 0/,
    );
  });
});
