import type { ItemCompletedEvent, ItemStartedEvent, JobStatusEvent } from '../events/elastic-job-event.types.js';
import type {
  ExecutionHistoryQuery,
  ExecutionLine,
  ExecutionLines,
  ExecutionRecord,
} from '../interfaces/execution-history.interface.js';
import type { ItemLinesRecord } from './trace-store.interface.js';
import { javaItemList } from '../util/item-list.js';

/**
 * What every SQL trace store writes and reads the same way, whatever its dialect: ElasticJob's RDB tracing has the
 * same columns and sizes in each database's flavour (ElasticJob's `ecosystem/tracing/rdb/.../META-INF/sql/*.properties`,
 * docs/reference/elasticjob.md §7), only the DDL, the upserts and the placeholders differ.
 */

/**
 * Every text cut to its column's size (ElasticJob cuts failure causes and messages to 4000; the others are cut here
 * too, so that no event can fail its batch: a job of hundreds of items has a task id longer than 255).
 */
const SIZES = { jobName: 100, taskId: 255, hostname: 255, ip: 50, text: 4000, items: 100 };

/** The most executions one query returns. */
export const MAX_EXECUTIONS_READ = 500;

function cut(text: string, size: number): string {
  return text.length > size ? text.slice(0, size) : text;
}

function truncate(text: string | undefined): string | null {
  return text === undefined ? null : cut(text, SIZES.text);
}

/** The columns a start row and a completion row share: id, job_name, task_id, hostname, ip, sharding_item, source. */
export function executionColumns(event: ItemStartedEvent | ItemCompletedEvent): unknown[] {
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

/** A completion's own columns, after executionColumns(): failure_cause, is_success, start_time, complete_time. */
export function completionColumns(event: ItemCompletedEvent): unknown[] {
  return [truncate(event.failureCause), event.success, event.startTime, event.completeTime];
}

/**
 * JOB_STATUS_TRACE_LOG's columns in ElasticJob's INSERT order: id, job_name, original_task_id, task_id, slave_id,
 * execution_type, sharding_item, state, message, creation_time.
 */
export function statusColumns(event: JobStatusEvent): unknown[] {
  return [
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
  ];
}

/** SQLSTATE classes 22 (data exception) and 23 (integrity constraint violation): errors no retry can mend. */
export function isDataErrorState(sqlState: unknown): boolean {
  return typeof sqlState === 'string' && (sqlState.startsWith('22') || sqlState.startsWith('23'));
}

/** A query's filters on JOB_EXECUTION_LOG, with `?` placeholders and their values in order, and its page. */
export interface ExecutionFilters {
  where: string[];
  values: unknown[];
  limit: number;
  offset: number;
}

/** The console's query as SQL conditions: every filter a parameter; the table keeps the IP only. */
export function executionFilters(query: ExecutionHistoryQuery): ExecutionFilters {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (condition: string, value: unknown): void => {
    where.push(condition);
    values.push(value);
  };
  if (query.jobName !== undefined) add('job_name = ?', query.jobName);
  if (query.item !== undefined) add('sharding_item = ?', query.item);
  if (query.instance !== undefined) add('ip = ?', query.instance.split('@-@')[0]);
  // is_success is BOOLEAN in PostgreSQL's flavour and INT (0 or 1) in MySQL's: `NOT` reads both.
  if (query.result === 'running') where.push('complete_time IS NULL');
  if (query.result === 'success') where.push('complete_time IS NOT NULL AND is_success');
  if (query.result === 'failure') where.push('complete_time IS NOT NULL AND NOT is_success');
  if (query.from !== undefined) add('start_time >= ?', query.from);
  if (query.to !== undefined) add('start_time < ?', query.to);
  return {
    where,
    values,
    limit: Math.min(Math.max(1, Math.floor(query.limit)), MAX_EXECUTIONS_READ),
    offset: Math.max(0, Math.floor(query.offset ?? 0)),
  };
}

/** The columns executionRecord() reads, in a SELECT's order. */
export const EXECUTION_COLUMNS =
  'id, job_name, sharding_item, execution_source, ip, hostname, start_time, complete_time, is_success, failure_cause';

export interface ExecutionRow {
  id: string;
  job_name: string;
  sharding_item: number;
  execution_source: string;
  ip: string;
  hostname: string;
  start_time: Date | null;
  complete_time: Date | null;
  /** BOOLEAN (PostgreSQL) or INT (MySQL). */
  is_success: boolean | number;
  failure_cause: string | null;
}

/** A start row has `is_success` false and no complete time: shown as running (`success` undefined). */
export function executionRecord(row: ExecutionRow): ExecutionRecord {
  return {
    id: row.id,
    jobName: row.job_name,
    item: row.sharding_item,
    source: row.execution_source,
    ip: row.ip,
    hostname: row.hostname,
    startTime: row.start_time ?? undefined,
    completeTime: row.complete_time ?? undefined,
    success: row.complete_time === null ? undefined : Boolean(row.is_success),
    failureCause: row.failure_cause ?? undefined,
  };
}

/**
 * JOB_EXECUTION_LINES, our table beside ElasticJob's (never theirs: Java's tracing reads those): one row per
 * execution that kept lines, `execution_id` its JOB_EXECUTION_LOG row's `id`, the lines as JSON text (bounded by the
 * item's logger: 300 lines, 32 KB of text), `dropped` the lines past the bounds. Its columns in INSERT order:
 * execution_id, job_name, line_count, dropped, kept_lines, complete_time.
 */
export function linesColumns(record: ItemLinesRecord): unknown[] {
  return [
    record.id,
    cut(record.jobName, SIZES.jobName),
    record.lines.length,
    record.dropped,
    JSON.stringify(record.lines),
    record.completeTime,
  ];
}

/** A job name as JOB_EXECUTION_LINES keeps it (cut to its column), to look a row up by. */
export function storedJobName(jobName: string): string {
  return cut(jobName, SIZES.jobName);
}

/** A JOB_EXECUTION_LINES row read back; undefined when its JSON is not lines (a row written by something else). */
export function linesFromRow(row: { kept_lines: string; dropped: number }): ExecutionLines | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(row.kept_lines);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed)) return undefined;
  const lines = parsed.filter(
    (line: Partial<ExecutionLine> | null): line is ExecutionLine =>
      typeof line === 'object' &&
      line !== null &&
      typeof line.at === 'number' &&
      typeof line.level === 'string' &&
      typeof line.message === 'string',
  );
  return { lines, dropped: Number(row.dropped) };
}
