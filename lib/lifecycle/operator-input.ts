import type { ExecutionHistoryQuery, ExecutionResult } from '../interfaces/execution-history.interface.js';
import { isIP } from 'node:net';
import { InvalidOperationError, quoteInput } from '../errors/elastic-job.errors.js';
import { MAX_JOB_NAME_LENGTH, nodeNameProblem } from '../registry/zookeeper-names.js';
import type { OperationTarget } from './lifecycle.types.js';

/**
 * The one check of what an operator gives (docs/operations/errors.md, "Errors of the operator's surfaces"): the
 * operator API runs every argument through it before it reads or writes anything, and the message patterns, the CLI and
 * the console run their fields through it too, naming them as their callers wrote them (`ip`, `--ip`, a path segment).
 * What it refuses is refused everywhere alike, with an InvalidOperationError that names the operation and the field and
 * quotes the input short (errors.quoteInput).
 */

export { MAX_JOB_NAME_LENGTH };
/** Largest job parameter a trigger takes, in UTF-8 bytes: it is written once per instance online. */
export const MAX_JOB_PARAMETER_BYTES = 64 * 1024;

/** A job's name: a string that is one ZooKeeper node name (registry/zookeeper-names.ts) of at most MAX_JOB_NAME_LENGTH. */
export function checkJobName(value: unknown, operation: string, field = 'jobName'): string {
  const problem = nameProblem(value, MAX_JOB_NAME_LENGTH);
  if (problem) throw new InvalidOperationError(operation, field, `must be a job's name, ${problem}`);
  return value as string;
}

/**
 * A server's IP as ElasticJob registers servers (`servers/{ip}`: IpUtils.getIp, an IPv4 or IPv6 address; this
 * library's instances, IPv4): nothing else can name a server.
 */
export function checkServerIp(value: unknown, operation: string, field = 'serverIp'): string {
  if (typeof value !== 'string' || isIP(value) === 0)
    throw new InvalidOperationError(
      operation,
      field,
      `must be a server's IP address (IPv4 or IPv6), got ${quoteInput(value)}`,
    );
  return value;
}

/** An item number, before the job's shardingTotalCount is known: an integer >= 0 (checkItemInRange then). */
export function checkItemNumber(value: unknown, operation: string, field = 'item'): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new InvalidOperationError(operation, field, `must be an integer >= 0, got ${quoteInput(value)}`);
  return value;
}

/** An item of a job with `total` items: 0..total-1. */
export function checkItemInRange(item: number, total: number, operation: string, field = 'item'): number {
  if (item >= total)
    throw new InvalidOperationError(
      operation,
      field,
      `must be an item of the job, 0..${total - 1} (shardingTotalCount ${total}), got ${item}`,
    );
  return item;
}

/** A trigger's job parameter: absent, or a string of at most MAX_JOB_PARAMETER_BYTES. */
export function checkJobParameter(value: unknown, operation: string, field = 'jobParameter'): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string')
    throw new InvalidOperationError(operation, field, `must be a string, got ${quoteInput(value)}`);
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_JOB_PARAMETER_BYTES)
    throw new InvalidOperationError(
      operation,
      field,
      `is ${bytes} bytes long; at most ${MAX_JOB_PARAMETER_BYTES} (it is written once for each instance online)`,
    );
  return value;
}

/**
 * Which instances an operation applies to, as ElasticJob's JobOperateAPI takes them: a job, a server, or both, and
 * no other key (a misspelt `serverIP` must not widen "this job on this server" to "this job everywhere").
 */
export function checkTarget(value: unknown, operation: string): OperationTarget {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidOperationError(operation, 'target', `must be { jobName?, serverIp? }, got ${quoteInput(value)}`);
  checkKeys(value, ['jobName', 'serverIp'], operation);
  const { jobName, serverIp } = value as { jobName?: unknown; serverIp?: unknown };
  if (jobName === undefined && serverIp === undefined)
    throw new InvalidOperationError(operation, 'target', 'name a jobName, a serverIp, or both');
  return {
    ...(jobName === undefined ? {} : { jobName: checkJobName(jobName, operation) }),
    ...(serverIp === undefined ? {} : { serverIp: checkServerIp(serverIp, operation) }),
  };
}

/** An object of options or fields has only the keys `allowed`: an unknown one is a typo, not something to ignore. */
export function checkKeys(value: object, allowed: readonly string[], operation: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key))
      throw new InvalidOperationError(
        operation,
        'fields',
        `${quoteInput(key)} is not one; ${operation} takes ${allowed.length > 0 ? allowed.join(', ') : 'no fields'}`,
      );
  }
}

/** What is wrong with a name, as `got 'x': it contains '/'`; undefined when nothing is. */
/**
 * A workflow's name or a run's id (docs/guide/workflows.md): one ZooKeeper node name, as a job's, so that it may not
 * leave the workflow's subtree.
 */
export function checkWorkflowNode(
  value: unknown,
  operation: string,
  kind: 'name' | 'runId',
  field: string = kind,
): string {
  const problem = nameProblem(value, MAX_JOB_NAME_LENGTH);
  if (problem)
    throw new InvalidOperationError(
      operation,
      field,
      `must be ${kind === 'name' ? "a workflow's name" : "a run's id"}, ${problem}`,
    );
  return value as string;
}

function nameProblem(value: unknown, maxLength: number): string | undefined {
  if (typeof value !== 'string') return `got ${quoteInput(value)}: it is not a string`;
  if (value.length > maxLength) return `got ${quoteInput(value)}: it is longer than ${maxLength} characters`;
  const problem = nodeNameProblem(value);
  return problem ? `got ${quoteInput(value)}: it ${problem}` : undefined;
}

/** The most executions one history query answers. */
export const MAX_EXECUTIONS_PER_QUERY = 500;
/** How deep a history query may page: each instance asked sends offset + limit executions at most. */
export const MAX_EXECUTIONS_WINDOW = 1000;
const EXECUTION_RESULTS: readonly ExecutionResult[] = ['success', 'failure', 'running'];

/**
 * An execution-history query: only its own keys; a job name; an item; an instance id (`{ip}@-@{pid}`) or a server
 * IP; a result; `from` and `to` as valid dates; `offset` >= 0; `limit` 1..MAX_EXECUTIONS_PER_QUERY.
 */
export function checkExecutionQuery(value: unknown, operation: string): ExecutionHistoryQuery {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidOperationError(operation, 'query', `must be an object, got ${quoteInput(value)}`);
  checkKeys(value, ['jobName', 'item', 'instance', 'result', 'from', 'to', 'offset', 'limit'], operation);
  const q = value as Record<string, unknown>;
  const limit = q.limit;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > MAX_EXECUTIONS_PER_QUERY)
    throw new InvalidOperationError(
      operation,
      'limit',
      `must be an integer 1..${MAX_EXECUTIONS_PER_QUERY}, got ${quoteInput(limit)}`,
    );
  const query: ExecutionHistoryQuery = { limit };
  if (q.jobName !== undefined) query.jobName = checkJobName(q.jobName, operation);
  if (q.item !== undefined) query.item = checkItemNumber(q.item, operation);
  if (q.instance !== undefined) {
    const [ip, pid, ...rest] = typeof q.instance === 'string' ? q.instance.split('@-@') : [];
    if (ip === undefined || rest.length > 0 || (pid !== undefined && !/^\d{1,10}$/.test(pid)))
      throw new InvalidOperationError(
        operation,
        'instance',
        `must be an instance id ({ip}@-@{pid}) or a server IP, got ${quoteInput(q.instance)}`,
      );
    checkServerIp(ip, operation, 'instance');
    query.instance = q.instance as string;
  }
  if (q.result !== undefined) {
    if (!(EXECUTION_RESULTS as readonly unknown[]).includes(q.result))
      throw new InvalidOperationError(
        operation,
        'result',
        `must be one of ${EXECUTION_RESULTS.join(', ')}, got ${quoteInput(q.result)}`,
      );
    query.result = q.result as ExecutionResult;
  }
  for (const field of ['from', 'to'] as const) {
    const time = q[field];
    if (time === undefined) continue;
    if (!(time instanceof Date) || Number.isNaN(time.getTime()))
      throw new InvalidOperationError(operation, field, `must be a valid Date, got ${quoteInput(time)}`);
    query[field] = time;
  }
  if (q.offset !== undefined) {
    if (typeof q.offset !== 'number' || !Number.isSafeInteger(q.offset) || q.offset < 0)
      throw new InvalidOperationError(operation, 'offset', `must be an integer >= 0, got ${quoteInput(q.offset)}`);
    query.offset = q.offset;
  }
  // Each instance asked reads and sends offset + limit executions: bounded, so that one query cannot stall them.
  if ((query.offset ?? 0) + limit > MAX_EXECUTIONS_WINDOW)
    throw new InvalidOperationError(
      operation,
      'offset',
      `offset + limit must be at most ${MAX_EXECUTIONS_WINDOW} (the newest executions), got ${(query.offset ?? 0) + limit}`,
    );
  return query;
}

/** A wait's bound as the operator's calls take it: an integer 0..60000 ms. */
export function checkTimeout(timeoutMs: unknown, operation: string): number {
  if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > 60_000)
    throw new InvalidOperationError(
      operation,
      'timeoutMs',
      `must be an integer 0..60000, got ${quoteInput(timeoutMs)}`,
    );
  return timeoutMs;
}

/** getWorkflowRuns' options, `{ limit? }`: the limit, an integer 1..1000, or undefined (every run kept). */
export function checkRunsLimit(options: unknown, operation: string): number | undefined {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOperationError(operation, 'options', `must be { limit? }, got ${quoteInput(options)}`);
  checkKeys(options, ['limit'], operation);
  const { limit } = options as { limit?: unknown };
  if (limit !== undefined && (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > 1000))
    throw new InvalidOperationError(operation, 'limit', `must be an integer 1..1000, got ${quoteInput(limit)}`);
  return limit;
}

/** rerunWorkflowStep's options, `{ items? }`: which items, 'failed' (the default) or 'all'. */
export function checkRerunItems(options: unknown, operation: string): 'failed' | 'all' {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOperationError(operation, 'options', `must be { items? }, got ${quoteInput(options)}`);
  checkKeys(options, ['items'], operation);
  const items = (options as { items?: unknown }).items ?? 'failed';
  if (items !== 'failed' && items !== 'all')
    throw new InvalidOperationError(operation, 'items', `must be 'failed' or 'all', got ${quoteInput(items)}`);
  return items;
}
