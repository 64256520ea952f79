import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { Injectable, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type Connection, createConnection, createPool, type Pool, type RowDataPacket } from 'mysql2/promise';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ElasticJobModule,
  ElasticJobRegistry,
  JobConfigurationError,
  ShardedJob,
  type ShardingContext,
  type TracedEvent,
  TraceWriter,
} from '../../lib/index.js';
import { ElasticJobConsoleModule } from '../../lib/console/index.js';
import {
  ElasticJobMysqlTracing,
  MysqlTraceStore,
  mysqlTracing,
  mysqlTracingAsync,
  validateMysqlTracingOptions,
} from '../../lib/mysql/index.js';
import { inUtc } from '../../lib/mysql/mysql-tracing.js';
import { appOptions, bootApp } from '../support/app.js';
import { LocalMariaDb } from '../support/local-mariadb.js';
import { hold, releaseAll } from '../support/resources.js';
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
import { eventually, uniqueNamespace } from '../support/zk.js';

/**
 * Tracing into a real MySQL-compatible server (Debian's MariaDB, started here once for the file on a free port with
 * its own data dir): ElasticJob's two tables and index as its MySQL DDL makes them, its own SELECTs reading our rows,
 * and the acceptance every SQL store passes (test/support/tracing-acceptance.ts, as tracing.spec.ts for PostgreSQL):
 * its write rules, the console's queries, texts cut to their columns, a database that stops and comes back.
 */

/**
 * ElasticJob 3.0.5's SQL, from its files as they are (`ecosystem/tracing/rdb/src/main/resources/META-INF/sql/`,
 * copied into test/fixtures/elasticjob-rdb/), read as java.util.Properties reads them: `key = value`, a line ending
 * in a backslash continued by the next with its leading blanks dropped.
 */
function elasticJobSql(file: 'MySQL' | 'SQL92'): Map<string, string> {
  const text = readFileSync(new URL(`../fixtures/elasticjob-rdb/${file}.properties`, import.meta.url), 'utf8');
  const logical = text.replace(/\\\r?\n[ \t]*/g, '').split(/\r?\n/);
  const entries = logical
    .filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#'))
    .map((line) => /^\s*([^=:\s]+)\s*[=:]\s*(.*)$/.exec(line)!)
    .map((match) => [match[1]!, match[2]!.trim()] as const);
  return new Map(entries);
}
const MYSQL_SQL = elasticJobSql('MySQL');
const SQL92_SQL = elasticJobSql('SQL92');

let database: LocalMariaDb;
/** The test's own reads, in UTC (a pool: its connections die with the server and are made again after). */
let client: Pool;

/** The job's execution rows (none while the table does not exist yet), through `on`. */
async function executions(jobName: string, on: Pool = client): Promise<Array<ExecutionRow & RowDataPacket>> {
  try {
    const [rows] = await on.query<Array<ExecutionRow & RowDataPacket>>(
      'SELECT * FROM JOB_EXECUTION_LOG WHERE job_name = ? ORDER BY start_time, sharding_item',
      [jobName],
    );
    return rows;
  } catch (error) {
    if ((error as { errno?: number }).errno === 1146) return [];
    throw error;
  }
}

const mysql: TracedDatabase = {
  provider: (options) => mysqlTracing({ connectionString: database.connectionString, ...options }),
  service: ElasticJobMysqlTracing,
  stop: () => database.stop(),
  start: () => database.start(),
  executions: (jobName) => executions(jobName),
  async statusItems(jobName) {
    const [rows] = await client.query<RowDataPacket[]>(
      'SELECT sharding_item FROM JOB_STATUS_TRACE_LOG WHERE job_name = ?',
      [jobName],
    );
    return rows.map((row) => String(row.sharding_item));
  },
  timestampMs: 1000, // TIMESTAMP without fractional seconds, as ElasticJob's DDL has it
};

beforeAll(async () => {
  database = await LocalMariaDb.create();
  client = createPool({ uri: database.connectionString, connectionLimit: 1, timezone: 'Z' });
  client.on('connection', inUtc);
});

afterAll(async () => {
  await client?.end().catch(() => undefined);
  await database?.destroy();
});

afterEach(async () => {
  await releaseAll();
});

@Injectable()
class UnicodeJob {
  @ShardedJob({ jobName: 'unicode', cron: '0 0 0 1 1 *', shardingTotalCount: 2 })
  run(context: ShardingContext): void {
    if (context.shardingItem === 1) throw new Error('区域失败');
  }
}

/** A property as the proxied object has it, its methods bound to the object itself. */
function own(target: object, property: string | symbol): unknown {
  const value = Reflect.get(target, property, target) as unknown;
  return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
}

/** What MySQL says a table is, its AUTO_INCREMENT counter aside. */
async function tableDefinition(on: Pool | Connection, table: string): Promise<string> {
  const [rows] = await on.query<RowDataPacket[]>(`SHOW CREATE TABLE ${table}`);
  return String(rows[0]!['Create Table']).replace(/ AUTO_INCREMENT=\d+/, '');
}
describe('tracing into MySQL (MariaDB)', () => {
  it("creates ElasticJob's tables and index as its MySQL DDL does; its own SELECTs read each item and firing", async () => {
    const app = await bootTraced(mysql, 'tracing-mysql', [TracedJob]);
    const taskId = await expectFiringWritten(mysql, app);
    const me = taskId.split('@-@READY@-@')[1]!;

    // ElasticJob's status SELECT (SQL92's `JOB_STATUS_TRACE_LOG.SELECT`, as its MySQL one is broken: below).
    const select = SQL92_SQL.get('JOB_STATUS_TRACE_LOG.SELECT')!;
    expect(select).toBe('SELECT * FROM JOB_STATUS_TRACE_LOG WHERE task_id=?');
    const statuses = await eventually(
      async () => (await client.query<RowDataPacket[]>(select, [taskId]))[0],
      (found) => found.length === 3,
      10_000,
      'three status rows',
    );
    expect(statuses.map((row) => row.state).sort()).toEqual(['TASK_ERROR', 'TASK_RUNNING', 'TASK_STAGING']);
    expect(statuses.every((row) => row.sharding_item === '[0, 1, 2]' && row.slave_id === me.split('@-@')[0])).toBe(
      true,
    );
    expect(statuses.every((row) => row.execution_type === 'READY' && row.job_name === 'traced')).toBe(true);
    const error = statuses.find((row) => row.state === 'TASK_ERROR')!;
    expect(String(error.message).startsWith('{2=Error: region ap failed: ')).toBe(true);
    expect(error.message).toHaveLength(4000);
    // ElasticJob's own lookup of a task's original id, which it runs before writing a status other than STAGING.
    const [original] = await client.query<RowDataPacket[]>(
      MYSQL_SQL.get('JOB_STATUS_TRACE_LOG.SELECT_ORIGINAL_TASK_ID')!,
      [taskId],
    );
    expect(original).toEqual([{ original_task_id: '' }]);
    // ElasticJob's MySQL flavour of the status SELECT names a `source` column its own DDL never makes (nothing in
    // ElasticJob runs it): refused here as on ElasticJob's own table, since ours has exactly its columns.
    await expect(client.query(MYSQL_SQL.get('JOB_STATUS_TRACE_LOG.SELECT')!, [taskId])).rejects.toMatchObject({
      errno: 1054,
    });

    // ElasticJob's DDL run as it is in a database of its own makes the same tables and index as the tracer made.
    const admin = await createConnection({ uri: database.connectionString });
    await admin.query('CREATE DATABASE elasticjob_java');
    await admin.query('USE elasticjob_java');
    for (const key of [
      'JOB_EXECUTION_LOG.TABLE.CREATE',
      'JOB_STATUS_TRACE_LOG.TABLE.CREATE',
      'TASK_ID_STATE_INDEX.INDEX.CREATE',
    ])
      await admin.query(MYSQL_SQL.get(key)!);
    for (const table of ['JOB_EXECUTION_LOG', 'JOB_STATUS_TRACE_LOG'])
      expect(await tableDefinition(client, table), table).toBe(await tableDefinition(admin, table));
    const indexes = async (schema: string) =>
      (
        await admin.query<RowDataPacket[]>(
          'SELECT TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, SUB_PART, NON_UNIQUE FROM information_schema.STATISTICS ' +
            'WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX',
          [schema],
        )
      )[0];
    // Beside them, our own table of items' lines (ElasticJob's two left as its DDL makes them).
    const all = await indexes('elasticjob');
    expect(all.filter((row) => row.TABLE_NAME === 'JOB_EXECUTION_LINES').map((row) => row.INDEX_NAME)).toEqual([
      'PRIMARY',
    ]);
    const ours = all.filter((row) => row.TABLE_NAME !== 'JOB_EXECUTION_LINES');
    expect(ours).toEqual(await indexes('elasticjob_java'));
    expect(ours.filter((row) => row.INDEX_NAME === 'TASK_ID_STATE_INDEX')).toHaveLength(2);
    await admin.query('DROP DATABASE elasticjob_java');
    await admin.end();
  });

  it("answers the console's history queries with their filters, and serves the console's executions list", async () => {
    @Module({
      imports: [
        ElasticJobModule.forRoot(appOptions(uniqueNamespace('tracing-mysql-query'))),
        ElasticJobConsoleModule.forRoot({ executionHistory: ElasticJobMysqlTracing }),
      ],
      providers: [
        TracedJob,
        // The async form, with its options from a factory.
        mysqlTracingAsync({
          useFactory: async () => ({ connectionString: database.connectionString, flushIntervalMilliseconds: 100 }),
        }),
      ],
    })
    class ConsoleApp {}
    const app = await NestFactory.create(ConsoleApp, { logger: ['error'] });
    hold(() => app.close());
    await app.listen(0, '127.0.0.1');
    const ours = await expectHistoryQueriesFiltered(mysql, app);

    // The console's executions list reads the same store.
    const { port } = app.getHttpServer().address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/elastic-job/api/executions?job=traced&result=failure`);
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { source: string; executions: Array<{ id: string; item: number }> };
    expect(answer.source).toBe('database');
    expect(answer.executions.map((row) => row.id).sort()).toEqual(
      ours
        .filter((row) => row.success === false)
        .map((row) => row.id)
        .sort(),
    );
  });

  it('never holds a firing up while the database is away; the backlog is written when it is back, drops counted', async () => {
    await expectOutageSurvived(mysql);
  });

  it('loses nothing while the database is away within the buffer: every firing is written when it is back', async () => {
    await expectNothingLostInOutage(mysql);
  });

  it('cuts every text to its column: a firing of 120 items (task id and item list longer than their columns) is written', async () => {
    await expectTextsCut(mysql);
  });

  it('drops alone an event the database refuses (text its latin1 columns cannot hold); the others are written', async () => {
    // A database made with MySQL 5.7's default character set: ElasticJob's DDL names none, so its tables take it.
    const admin = await createConnection({ uri: database.connectionString });
    await admin.query('CREATE DATABASE elasticjob_latin1 CHARACTER SET latin1');
    await admin.end();
    const latin1 = database.connectionString.replace(/\/elasticjob$/, '/elasticjob_latin1');
    const app = await bootApp(appOptions(uniqueNamespace('tracing-mysql-refused')), [
      UnicodeJob,
      mysqlTracing({ connectionString: latin1, flushIntervalMilliseconds: 100 }),
    ]);
    hold(() => app.close());
    const tracing = app.get(ElasticJobMysqlTracing);
    const reader = createPool({ uri: latin1, connectionLimit: 1 });
    hold(() => reader.end());
    await app.get(ElasticJobRegistry).trigger('unicode');
    await eventually(
      () => tracing.stats,
      (stats) => stats.buffered === 0 && stats.written >= 7, // 2 starts, 2 completions, 3 statuses
      15_000,
      'the firing written',
    );
    const rows = await executions('unicode', reader);
    // Item 1's completion (its failure cause) and the TASK_ERROR status (its message) cannot be stored: dropped,
    // counted; item 0's rows and item 1's start row are there.
    expect(rows.map((row) => [row.sharding_item, row.complete_time === null ? 'running' : row.is_success])).toEqual([
      [0, 1],
      [1, 'running'],
    ]);
    expect(tracing.stats.dropped).toBe(2);
    const [states] = await reader.query<RowDataPacket[]>(
      "SELECT state FROM JOB_STATUS_TRACE_LOG WHERE job_name = 'unicode' ORDER BY state",
    );
    expect(states.map((row) => row.state)).toEqual(['TASK_RUNNING', 'TASK_STAGING']);
  });

  it('writes a batch whose COMMIT was sent before the connection failed again without doubling its status rows', async () => {
    const pool = createPool({ uri: database.connectionString, connectionLimit: 2, timezone: 'Z' });
    let loseCommitReply = true;
    // The real pool, but the first COMMIT's reply is lost after the server did it (the connection dropping then).
    const flaky = new Proxy(pool, {
      get(target, property) {
        if (property !== 'getConnection') return own(target, property);
        return async () => {
          const connection = await target.getConnection();
          return new Proxy(connection, {
            get(inner, name) {
              if (name !== 'query') return own(inner, name);
              return async (options: { sql: string }) => {
                const result = await inner.query(options);
                if (options.sql === 'COMMIT' && loseCommitReply) {
                  loseCommitReply = false;
                  throw Object.assign(new Error('Connection lost: the server closed the connection.'), {
                    code: 'PROTOCOL_CONNECTION_LOST',
                  });
                }
                return result;
              };
            },
          });
        };
      },
    });
    const store = new MysqlTraceStore(flaky, true);
    hold(() => store.close());
    const writer = new TraceWriter(store, {}, new Logger('test'));
    const taskId = `commit-lost@-@0@-@READY@-@10.0.0.1@-@${randomUUID()}`;
    const status = (state: 'TASK_STAGING' | 'TASK_RUNNING'): TracedEvent => ({
      type: 'status',
      jobName: 'commit-lost',
      instanceId: '10.0.0.1@-@1',
      at: new Date(),
      id: randomUUID(),
      originalTaskId: '',
      taskId,
      slaveId: '10.0.0.1',
      executionType: 'READY',
      shardingItems: [0],
      state,
      message: '',
      creationTime: new Date(),
    });
    writer.push(status('TASK_STAGING'));
    writer.push(status('TASK_RUNNING'));
    await writer.flush();
    expect(writer.stats.buffered).toBe(2); // the pass failed: the events wait
    await eventually(
      async () => {
        await writer.flush(); // nothing during the backoff wait, then the batch again
        return writer.stats.buffered;
      },
      (buffered) => buffered === 0,
      10_000,
      'the batch written again',
    );
    const [rows] = await client.query<RowDataPacket[]>(SQL92_SQL.get('JOB_STATUS_TRACE_LOG.SELECT')!, [taskId]);
    expect(rows.map((row) => row.state).sort()).toEqual(['TASK_RUNNING', 'TASK_STAGING']);
  });

  it("writes through the app's own pool, and leaves it open at shutdown", async () => {
    const pool = createPool({ uri: database.connectionString, connectionLimit: 2, timezone: 'Z' });
    pool.on('connection', inUtc);
    hold(() => pool.end());
    const before = (await executions('traced')).length; // earlier tests' job has the same name
    const app = await bootApp(appOptions(uniqueNamespace('tracing-mysql-pool')), [
      TracedJob,
      mysqlTracing({ pool, flushIntervalMilliseconds: 100 }),
    ]);
    await app.get(ElasticJobRegistry).trigger('traced');
    await eventually(
      () => executions('traced'),
      (found) => found.length === before + 3 && found.every((row) => row.complete_time !== null),
      15_000,
      'the firing written',
    );
    await app.close();
    const [rows] = await pool.query<RowDataPacket[]>('SELECT 1 AS open');
    expect(rows).toEqual([{ open: 1 }]);
  });

  it("writes items' kept lines into JOB_EXECUTION_LINES, bounded; the console's lines route reads them from it", async () => {
    await expectLinesWrittenAndRead(mysql);
  });

  it("keeps items' lines through a database outage within the buffer: every firing's lines written when it is back", async () => {
    await expectLinesKeptThroughOutage(mysql);
  });

  it('refuses bad options with a typed error naming the field', () => {
    expect(() => validateMysqlTracingOptions({})).toThrow(JobConfigurationError);
    expect(() => validateMysqlTracingOptions({})).toThrow(/tracing\.mysql\.connectionString/);
    expect(() => mysqlTracing({ connectionString: 'mysql://x/db', batchSize: 0 })).toThrow(
      /tracing\.mysql\.batchSize.*must be an integer > 0/,
    );
    expect(() => mysqlTracing({ connectionString: 'mysql://x:3306' })).toThrow(
      /tracing\.mysql\.connectionString.*naming the database/,
    );
    expect(() => mysqlTracing({ connectionString: 'postgres://x/db' })).toThrow(/must be a mysql:\/\/ URL/);
  });
});
