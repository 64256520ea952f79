import type { Pool, PoolConnection, RowDataPacket } from 'mysql2/promise';
import type {
  ExecutionHistoryQuery,
  ExecutionLines,
  ExecutionRecord,
} from '../interfaces/execution-history.interface.js';
import type { TracedEvent } from '../tracing/trace-store.interface.js';
import { TRACE_PASS_TIMEOUT_MS } from '../tracing/trace-writer.js';
import {
  completionColumns,
  EXECUTION_COLUMNS,
  executionColumns,
  executionFilters,
  executionRecord,
  isDataErrorState,
  linesColumns,
  linesFromRow,
  storedJobName,
  type ExecutionRow,
  statusColumns,
} from '../tracing/trace-rows.js';

/**
 * ElasticJob's two tracing tables and their index in its MySQL flavour, word for word (ElasticJob 3.0.5's
 * `ecosystem/tracing/rdb/src/main/resources/META-INF/sql/MySQL.properties`: `JOB_EXECUTION_LOG.TABLE.CREATE`,
 * `JOB_STATUS_TRACE_LOG.TABLE.CREATE`, `TASK_ID_STATE_INDEX.INDEX.CREATE`; docs/reference/elasticjob.md §7): an
 * `auto_id` primary key, `id` unique in the execution log only, `is_success` an INT, TIMESTAMPs to the second.
 */
export const CREATE_TABLES = [
  'CREATE TABLE IF NOT EXISTS JOB_EXECUTION_LOG ( auto_id int NOT NULL AUTO_INCREMENT, id VARCHAR (40) NOT NULL, ' +
    'job_name VARCHAR (100) NOT NULL, task_id VARCHAR (255) NOT NULL, hostname VARCHAR (255) NOT NULL, ' +
    'ip VARCHAR (50) NOT NULL, sharding_item INT NOT NULL, execution_source VARCHAR (20) NOT NULL, ' +
    'failure_cause VARCHAR (4000) NULL, is_success INT NOT NULL, start_time TIMESTAMP NULL, ' +
    'complete_time TIMESTAMP NULL, PRIMARY KEY (auto_id), UNIQUE KEY `id` (`id`) ) ENGINE=InnoDB',
  'CREATE TABLE IF NOT EXISTS JOB_STATUS_TRACE_LOG ( auto_id int NOT NULL AUTO_INCREMENT, id VARCHAR (40) NOT NULL, ' +
    'job_name VARCHAR (100) NOT NULL, original_task_id VARCHAR (255) NOT NULL, task_id VARCHAR (255) NOT NULL, ' +
    'slave_id VARCHAR (50) NOT NULL, execution_type VARCHAR (20) NOT NULL, sharding_item VARCHAR (100) NOT NULL, ' +
    'state VARCHAR (20) NOT NULL, message VARCHAR (4000) NULL, creation_time TIMESTAMP NULL, ' +
    'PRIMARY KEY (auto_id) ) ENGINE=InnoDB',
  'CREATE INDEX TASK_ID_STATE_INDEX ON JOB_STATUS_TRACE_LOG (task_id(128), state)',
] as const;

/**
 * Ours, not ElasticJob's (trace-rows.ts, linesColumns): items' kept lines, made when missing as theirs are. In
 * utf8mb4 whatever the database's default (a line may hold any character); MEDIUMTEXT, as 32 KB of text may take
 * more as JSON. (`LINES` is a reserved word in MySQL: the column is `kept_lines`.)
 */
export const CREATE_LINES_TABLE =
  'CREATE TABLE IF NOT EXISTS JOB_EXECUTION_LINES ( execution_id VARCHAR (40) NOT NULL, job_name VARCHAR (100) NOT NULL, ' +
  'line_count INT NOT NULL, dropped INT NOT NULL, kept_lines MEDIUMTEXT NOT NULL, complete_time TIMESTAMP NULL, ' +
  'PRIMARY KEY (execution_id) ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4';

/** MySQL's error numbers met here (its manual's server error reference). */
export const MYSQL_ERRORS = {
  /** ER_DUP_KEYNAME: the index is there already (another instance made it meanwhile). */
  duplicateKeyName: 1061,
  /** ER_NO_SUCH_TABLE: a tracing table dropped under us, or nothing traced yet. */
  noSuchTable: 1146,
} as const;

/**
 * Errors no retry can mend: SQLSTATE classes 22 and 23, and the values strict mode refuses under the general
 * SQLSTATE HY000 (1366 ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: a character the column's charset has not; 1265
 * WARN_DATA_TRUNCATED; 1292 ER_TRUNCATED_WRONG_VALUE).
 */
export function isMysqlDataError(error: unknown): boolean {
  const { sqlState, errno } = error as { sqlState?: unknown; errno?: unknown };
  return isDataErrorState(sqlState) || errno === 1366 || errno === 1265 || errno === 1292;
}

/** Every statement's bound (mysql2 ends a query that takes longer, and with it the connection). */
const timeout = TRACE_PASS_TIMEOUT_MS;

/**
 * Makes the tables as ElasticJob's `RDBJobEventRepository.initTablesAndIndexes()` does: each table when it is not
 * there (in upper or lower case), and the index only with the status table it belongs to.
 */
export async function createTablesIfMissing(connection: PoolConnection): Promise<void> {
  const [found] = await connection.query<RowDataPacket[]>({
    sql: 'SELECT UPPER(TABLE_NAME) AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()',
    timeout,
  });
  const existing = new Set(found.map((row) => String(row.name)));
  const [executionTable, statusTable, index] = CREATE_TABLES;
  if (!existing.has('JOB_EXECUTION_LOG')) await connection.query({ sql: executionTable, timeout });
  if (!existing.has('JOB_EXECUTION_LINES')) await connection.query({ sql: CREATE_LINES_TABLE, timeout });
  if (existing.has('JOB_STATUS_TRACE_LOG')) return;
  await connection.query({ sql: statusTable, timeout });
  await connection.query({ sql: index, timeout }).catch((error: unknown) => {
    if ((error as { errno?: unknown }).errno !== MYSQL_ERRORS.duplicateKeyName) throw error;
  });
}

// ElasticJob's JOB_EXECUTION_LOG.INSERT; a start already written (1062, a batch written again) is left as it is, as
// ElasticJob ignores its duplicate-key error.
const INSERT_START =
  'INSERT INTO JOB_EXECUTION_LOG (id, job_name, task_id, hostname, ip, sharding_item, execution_source, is_success, ' +
  'start_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE id = id';

// ElasticJob's UPDATE of the start row, or INSERT_COMPLETE / INSERT_FAILURE when there is none (the start was lost),
// as one statement on the unique `id`.
const UPSERT_COMPLETION =
  'INSERT INTO JOB_EXECUTION_LOG (id, job_name, task_id, hostname, ip, sharding_item, execution_source, ' +
  'failure_cause, is_success, start_time, complete_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ' +
  'ON DUPLICATE KEY UPDATE is_success = VALUES(is_success), complete_time = VALUES(complete_time), ' +
  'failure_cause = VALUES(failure_cause)';

// ElasticJob's JOB_STATUS_TRACE_LOG.INSERT. (ElasticJob first copies a non-STAGING row's original_task_id from its
// task's STAGING row, with its SELECT_ORIGINAL_TASK_ID: '' for ElasticJob-Lite, as the event has it.) The table has no
// unique key but auto_id: see writeEvents().
const INSERT_STATUS =
  'INSERT INTO JOB_STATUS_TRACE_LOG (id, job_name, original_task_id, task_id, slave_id, execution_type, ' +
  'sharding_item, state, message, creation_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';

// A row written again (a batch whose COMMIT was in doubt) is left as it is.
const INSERT_LINES =
  'INSERT INTO JOB_EXECUTION_LINES (execution_id, job_name, line_count, dropped, kept_lines, complete_time) ' +
  'VALUES (?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE execution_id = execution_id';

/**
 * The ids among `events`' status rows that are in the table already: asked only about a batch whose COMMIT may
 * have gone through (the status table has no unique key to lean on); through TASK_ID_STATE_INDEX's task_id.
 */
async function statusRowsWritten(connection: PoolConnection, events: readonly TracedEvent[]): Promise<Set<string>> {
  const statuses = events.filter((event) => event.type === 'status');
  if (statuses.length === 0) return new Set();
  const taskIds = [...new Set(statuses.map((event) => statusColumns(event)[3]))]; // as stored: cut to its column
  const [rows] = await connection.query<RowDataPacket[]>({
    sql: 'SELECT id FROM JOB_STATUS_TRACE_LOG WHERE task_id IN (?) AND id IN (?)',
    values: [taskIds, statuses.map((event) => event.id)],
    timeout,
  });
  return new Set(rows.map((row) => String(row.id)));
}

/**
 * Writes a batch of events in one transaction, in order. The execution rows are keyed by their unique `id`, so a
 * batch written again changes nothing; the status rows are not, so when `uncertain` (the batch, or part of it, may
 * have been committed by a pass that failed at its COMMIT), the rows already there are skipped. `committing()` is
 * called as the COMMIT is sent: from then on a failure leaves the outcome unknown.
 */
export async function writeEvents(
  connection: PoolConnection,
  events: readonly TracedEvent[],
  uncertain: boolean,
  committing: () => void,
): Promise<void> {
  await connection.query({ sql: 'START TRANSACTION', timeout });
  try {
    const written = uncertain ? await statusRowsWritten(connection, events) : new Set<string>();
    for (const event of events) {
      if (event.type === 'item.started') {
        await connection.query({
          sql: INSERT_START,
          values: [...executionColumns(event), 0, event.startTime],
          timeout,
        });
      } else if (event.type === 'item.completed') {
        const [cause, success, startTime, completeTime] = completionColumns(event);
        await connection.query({
          sql: UPSERT_COMPLETION,
          values: [...executionColumns(event), cause, success ? 1 : 0, startTime, completeTime],
          timeout,
        });
      } else if (event.type === 'item.lines') {
        await connection.query({ sql: INSERT_LINES, values: linesColumns(event), timeout });
      } else if (!written.has(event.id)) {
        await connection.query({ sql: INSERT_STATUS, values: statusColumns(event), timeout });
      }
    }
  } catch (error) {
    await connection.query({ sql: 'ROLLBACK', timeout }).catch(() => undefined);
    throw error;
  }
  committing();
  await connection.query({ sql: 'COMMIT', timeout });
}

/** The newest executions (ElasticJob's console reads the same table). No table yet (nothing traced so far): none. */
export async function readRecentExecutions(pool: Pool, query: ExecutionHistoryQuery): Promise<ExecutionRecord[]> {
  const { where, values, limit, offset } = executionFilters(query);
  const sql =
    `SELECT ${EXECUTION_COLUMNS} FROM JOB_EXECUTION_LOG ${where.length ? `WHERE ${where.join(' AND ')} ` : ''}` +
    'ORDER BY start_time IS NULL, start_time DESC, id LIMIT ? OFFSET ?';
  try {
    const [rows] = await pool.query<RowDataPacket[]>({ sql, values: [...values, limit, offset], timeout });
    return rows.map((row) => executionRecord(row as ExecutionRow));
  } catch (error) {
    if ((error as { errno?: unknown }).errno === MYSQL_ERRORS.noSuchTable) return [];
    throw error;
  }
}

/** One execution's kept lines (JOB_EXECUTION_LINES); undefined when it has none, or there is no table yet. */
export async function readExecutionLines(
  pool: Pool,
  jobName: string,
  executionId: string,
): Promise<ExecutionLines | undefined> {
  try {
    const [rows] = await pool.query<RowDataPacket[]>({
      sql: 'SELECT kept_lines, dropped FROM JOB_EXECUTION_LINES WHERE execution_id = ? AND job_name = ?',
      values: [executionId, storedJobName(jobName)],
      timeout,
    });
    const row = rows[0] as { kept_lines: string; dropped: number } | undefined;
    return row === undefined ? undefined : linesFromRow(row);
  } catch (error) {
    if ((error as { errno?: unknown }).errno === MYSQL_ERRORS.noSuchTable) return undefined;
    throw error;
  }
}
