import type { Pool, PoolClient } from 'pg';
import type {
  ExecutionHistoryQuery,
  ExecutionLines,
  ExecutionRecord,
} from '../interfaces/execution-history.interface.js';
import type { TracedEvent } from '../tracing/trace-store.interface.js';
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

/** PostgreSQL errors no retry can mend (SQLSTATE classes 22, data exceptions, and 23, constraint violations). */
export function isDataError(error: unknown): boolean {
  return isDataErrorState((error as { code?: unknown }).code);
}

/**
 * ElasticJob's two tracing tables in its PostgreSQL flavour (ElasticJob's
 * `ecosystem/tracing/rdb/.../META-INF/sql/PostgreSQL.properties`, docs/reference/elasticjob.md §7): the same names
 * (unquoted, so PostgreSQL folds them to lower case, as it does for ElasticJob's own statements), columns and types,
 * so ElasticJob's console reads what we write.
 */
export const CREATE_TABLES = [
  'CREATE TABLE IF NOT EXISTS JOB_EXECUTION_LOG (id VARCHAR(40) NOT NULL, job_name VARCHAR(100) NOT NULL, ' +
    'task_id VARCHAR(255) NOT NULL, hostname VARCHAR(255) NOT NULL, ip VARCHAR(50) NOT NULL, sharding_item INT NOT NULL, ' +
    'execution_source VARCHAR(20) NOT NULL, failure_cause VARCHAR(4000) NULL, is_success BOOLEAN NOT NULL, ' +
    'start_time TIMESTAMP NULL, complete_time TIMESTAMP NULL, PRIMARY KEY (id))',
  'CREATE TABLE IF NOT EXISTS JOB_STATUS_TRACE_LOG (id VARCHAR(40) NOT NULL, job_name VARCHAR(100) NOT NULL, ' +
    'original_task_id VARCHAR(255) NOT NULL, task_id VARCHAR(255) NOT NULL, slave_id VARCHAR(50) NOT NULL, ' +
    'execution_type VARCHAR(20) NOT NULL, sharding_item VARCHAR(100) NOT NULL, state VARCHAR(20) NOT NULL, ' +
    'message VARCHAR(4000) NULL, creation_time TIMESTAMP NULL, PRIMARY KEY (id))',
  'CREATE INDEX IF NOT EXISTS TASK_ID_STATE_INDEX ON JOB_STATUS_TRACE_LOG (task_id, state)',
  // Ours, not ElasticJob's (trace-rows.ts, linesColumns): items' kept lines, made when missing as theirs are.
  'CREATE TABLE IF NOT EXISTS JOB_EXECUTION_LINES (execution_id VARCHAR(40) NOT NULL, job_name VARCHAR(100) NOT NULL, ' +
    'line_count INT NOT NULL, dropped INT NOT NULL, kept_lines TEXT NOT NULL, complete_time TIMESTAMP NULL, ' +
    'PRIMARY KEY (execution_id))',
];

const INSERT_START =
  'INSERT INTO JOB_EXECUTION_LOG (id, job_name, task_id, hostname, ip, sharding_item, execution_source, is_success, ' +
  'start_time) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO NOTHING';

// ElasticJob updates the start row, and inserts a complete row when there is none (the start was lost): one upsert.
const UPSERT_COMPLETION =
  'INSERT INTO JOB_EXECUTION_LOG (id, job_name, task_id, hostname, ip, sharding_item, execution_source, ' +
  'failure_cause, is_success, start_time, complete_time) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ' +
  'ON CONFLICT (id) DO UPDATE SET is_success = EXCLUDED.is_success, complete_time = EXCLUDED.complete_time, ' +
  'failure_cause = EXCLUDED.failure_cause';

const INSERT_STATUS =
  'INSERT INTO JOB_STATUS_TRACE_LOG (id, job_name, original_task_id, task_id, slave_id, execution_type, ' +
  'sharding_item, state, message, creation_time) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ' +
  'ON CONFLICT (id) DO NOTHING';

const INSERT_LINES =
  'INSERT INTO JOB_EXECUTION_LINES (execution_id, job_name, line_count, dropped, kept_lines, complete_time) ' +
  'VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (execution_id) DO NOTHING';

/**
 * Writes a batch of events in one transaction, in order. Every statement is idempotent (keyed by the event's id),
 * so a batch whose outcome was unknown (the connection dropped at COMMIT) is simply written again.
 */
export async function writeEvents(client: PoolClient, events: readonly TracedEvent[]): Promise<void> {
  await client.query('BEGIN');
  try {
    for (const event of events) {
      if (event.type === 'item.started') {
        await client.query(INSERT_START, [...executionColumns(event), false, event.startTime]);
      } else if (event.type === 'item.completed') {
        await client.query(UPSERT_COMPLETION, [...executionColumns(event), ...completionColumns(event)]);
      } else if (event.type === 'item.lines') {
        await client.query(INSERT_LINES, linesColumns(event));
      } else {
        await client.query(INSERT_STATUS, statusColumns(event));
      }
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * The newest executions (ElasticJob's console reads the same table). No table yet (nothing traced so far): none.
 */
export async function readRecentExecutions(pool: Pool, query: ExecutionHistoryQuery): Promise<ExecutionRecord[]> {
  const { where, values, limit, offset } = executionFilters(query);
  let n = 2; // $1 and $2 are the page
  const conditions = where.map((condition) => condition.replace('?', () => `$${++n}`));
  const text =
    `SELECT ${EXECUTION_COLUMNS} FROM JOB_EXECUTION_LOG ` +
    `${conditions.length ? `WHERE ${conditions.join(' AND ')} ` : ''}` +
    'ORDER BY start_time DESC NULLS LAST, id LIMIT $1 OFFSET $2';
  try {
    const result = await pool.query<ExecutionRow>(text, [limit, offset, ...values]);
    return result.rows.map(executionRecord);
  } catch (error) {
    if ((error as { code?: unknown }).code === '42P01') return []; // undefined_table: nothing traced yet
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
    const result = await pool.query<{ kept_lines: string; dropped: number }>(
      'SELECT kept_lines, dropped FROM JOB_EXECUTION_LINES WHERE execution_id = $1 AND job_name = $2',
      [executionId, storedJobName(jobName)],
    );
    return result.rows[0] === undefined ? undefined : linesFromRow(result.rows[0]);
  } catch (error) {
    if ((error as { code?: unknown }).code === '42P01') return undefined; // undefined_table: nothing written yet
    throw error;
  }
}
