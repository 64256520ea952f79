import type { Pool, PoolClient } from 'pg';
import type { ExecutionHistoryQuery, ExecutionRecord } from '../interfaces/execution-history.interface.js';
import type { ItemCompletedEvent, ItemStartedEvent } from '../events/elastic-job-event.types.js';
import { javaItemList } from '../job/events/job-event-publisher.js';

import type { TracedEvent } from '../tracing/trace-store.interface.js';

/**
 * Every text cut to its column's size (ElasticJob cuts failure causes and messages to 4000; the others are cut here
 * too, so that no event can fail its batch: a job of hundreds of items has a task id longer than 255).
 */
const SIZES = { jobName: 100, taskId: 255, hostname: 255, ip: 50, source: 20, text: 4000, items: 100, state: 20 };

/** PostgreSQL errors no retry can mend (SQLSTATE classes 22, data exceptions, and 23, constraint violations). */
export function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
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

function cut(text: string, size: number): string {
  return text.length > size ? text.slice(0, size) : text;
}

function truncate(text: string | undefined): string | null {
  return text === undefined ? null : cut(text, SIZES.text);
}

/** The columns a start row and a completion row share: id, job_name, task_id, hostname, ip, sharding_item, source. */
function executionColumns(event: ItemStartedEvent | ItemCompletedEvent): unknown[] {
  return [
    event.id,
    cut(event.jobName, SIZES.jobName),
    cut(event.taskId, SIZES.taskId),
    cut(event.hostname, SIZES.hostname),
    cut(event.ip, SIZES.ip),
    event.shardingItem,
    event.source,
  ];
}

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
        await client.query(UPSERT_COMPLETION, [
          ...executionColumns(event),
          truncate(event.failureCause),
          event.success,
          event.startTime,
          event.completeTime,
        ]);
      } else {
        await client.query(INSERT_STATUS, [
          event.id,
          cut(event.jobName, SIZES.jobName),
          cut(event.originalTaskId, SIZES.taskId),
          cut(event.taskId, SIZES.taskId),
          cut(event.slaveId, SIZES.ip),
          event.executionType,
          cut(javaItemList(event.shardingItems), SIZES.items),
          event.state,
          truncate(event.message),
          event.creationTime,
        ]);
      }
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** The most executions one query returns. */
export const MAX_EXECUTIONS_READ = 500;

interface ExecutionRow {
  id: string;
  job_name: string;
  sharding_item: number;
  execution_source: string;
  ip: string;
  hostname: string;
  start_time: Date | null;
  complete_time: Date | null;
  is_success: boolean;
  failure_cause: string | null;
}

/**
 * The newest executions (ElasticJob's console reads the same table). A start row has `is_success` false and no
 * complete time: shown as running (`success` undefined). No table yet (nothing traced so far): none.
 */
export async function readRecentExecutions(pool: Pool, query: ExecutionHistoryQuery): Promise<ExecutionRecord[]> {
  const limit = Math.min(Math.max(1, Math.floor(query.limit)), MAX_EXECUTIONS_READ);
  const offset = Math.max(0, Math.floor(query.offset ?? 0));
  // Every filter a parameter; the table keeps the IP only, so an instance id matches its IP.
  const values: unknown[] = [limit, offset];
  const where: string[] = [];
  const add = (condition: string, value: unknown): void => {
    values.push(value);
    where.push(condition.replace('?', `$${values.length}`));
  };
  if (query.jobName !== undefined) add('job_name = ?', query.jobName);
  if (query.item !== undefined) add('sharding_item = ?', query.item);
  if (query.instance !== undefined) add('ip = ?', query.instance.split('@-@')[0]);
  if (query.result === 'running') where.push('complete_time IS NULL');
  if (query.result === 'success') where.push('complete_time IS NOT NULL AND is_success');
  if (query.result === 'failure') where.push('complete_time IS NOT NULL AND NOT is_success');
  if (query.from !== undefined) add('start_time >= ?', query.from);
  if (query.to !== undefined) add('start_time < ?', query.to);
  const text =
    'SELECT id, job_name, sharding_item, execution_source, ip, hostname, start_time, complete_time, is_success, ' +
    `failure_cause FROM JOB_EXECUTION_LOG ${where.length ? `WHERE ${where.join(' AND ')} ` : ''}` +
    'ORDER BY start_time DESC NULLS LAST, id LIMIT $1 OFFSET $2';
  try {
    const result = await pool.query<ExecutionRow>(text, values);
    return result.rows.map((row) => ({
      id: row.id,
      jobName: row.job_name,
      item: row.sharding_item,
      source: row.execution_source,
      ip: row.ip,
      hostname: row.hostname,
      startTime: row.start_time ?? undefined,
      completeTime: row.complete_time ?? undefined,
      success: row.complete_time === null ? undefined : row.is_success,
      failureCause: row.failure_cause ?? undefined,
    }));
  } catch (error) {
    if ((error as { code?: unknown }).code === '42P01') return []; // undefined_table: nothing traced yet
    throw error;
  }
}
