import type { ItemProgress } from '../interfaces/sharding-context.interface.js';
import type {
  ExecutionHistoryQuery,
  ExecutionLine,
  ExecutionLines,
  ExecutionRecord,
  ExecutionResult,
} from '../interfaces/execution-history.interface.js';

/**
 * The JSON of an execution-history query and its replies in ZooKeeper (`executions/query-{id}`, `reply-{id}~{instance}`,
 * docs/guide/console.md, "Execution history without a database"): written by the asker and the instances, read back
 * checked, since anyone with access to the namespace may write there.
 */

/** A reply stays far below ZooKeeper's 1 MB node limit (jute.maxbuffer): the oldest records go first. */
export const MAX_REPLY_BYTES = 512 * 1024;
const RESULTS: readonly ExecutionResult[] = ['success', 'failure', 'running'];

export interface ExecutionQueryRequest {
  /** The instances asked to answer. */
  instances: string[];
  query: ExecutionHistoryQuery;
  /**
   * What is asked (docs/guide/item-policies.md): the executions (default), one execution's kept lines (`lines`, with
   * its `executionId`), or the latest progress of the job's running items (`progress`). Older instances answer only
   * the executions: the asker checks a reply's shape.
   */
  kind?: 'executions' | 'lines' | 'progress';
  executionId?: string;
}

export function encodeQuery(request: ExecutionQueryRequest): Buffer {
  const { query } = request;
  return Buffer.from(
    JSON.stringify({
      instances: request.instances,
      query: { ...query, from: query.from?.toISOString(), to: query.to?.toISOString() },
      ...(request.kind === undefined || request.kind === 'executions' ? {} : { kind: request.kind }),
      ...(request.executionId === undefined ? {} : { executionId: request.executionId }),
    }),
    'utf8',
  );
}

/** Throws an Error saying what is wrong. */
export function decodeQuery(text: string): ExecutionQueryRequest {
  const raw = JSON.parse(text) as {
    instances?: unknown;
    query?: Record<string, unknown>;
    kind?: unknown;
    executionId?: unknown;
  };
  if (!Array.isArray(raw.instances) || !raw.instances.every((id) => typeof id === 'string'))
    throw new Error('instances must be a list of instance ids');
  if (raw.kind === 'lines') {
    if (typeof raw.executionId !== 'string' || raw.executionId.length > 100)
      throw new Error('a lines query needs an executionId');
    return { instances: raw.instances as string[], query: { limit: 1 }, kind: 'lines', executionId: raw.executionId };
  }
  if (raw.kind === 'progress') return { instances: raw.instances as string[], query: { limit: 1 }, kind: 'progress' };
  if (raw.kind !== undefined) throw new Error(`unknown kind of query ${JSON.stringify(raw.kind)}`);
  const q = raw.query;
  if (typeof q !== 'object' || q === null) throw new Error('query must be an object');
  const limit = q.limit;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > 10_000)
    throw new Error('query.limit must be an integer 1..10000');
  const query: ExecutionHistoryQuery = { limit };
  if (typeof q.jobName === 'string') query.jobName = q.jobName;
  if (typeof q.item === 'number' && Number.isSafeInteger(q.item)) query.item = q.item;
  if (typeof q.instance === 'string') query.instance = q.instance;
  if (typeof q.result === 'string' && (RESULTS as readonly string[]).includes(q.result))
    query.result = q.result as ExecutionResult;
  if (typeof q.from === 'string') query.from = new Date(q.from);
  if (typeof q.to === 'string') query.to = new Date(q.to);
  return { instances: raw.instances as string[], query };
}

/** The records, newest first, as many as fit in MAX_REPLY_BYTES. */
export function encodeReply(records: readonly ExecutionRecord[]): Buffer {
  let kept = records.length;
  for (;;) {
    const bytes = Buffer.from(JSON.stringify(records.slice(0, kept)), 'utf8');
    if (bytes.length <= MAX_REPLY_BYTES || kept === 0) return bytes;
    kept = Math.floor((kept * MAX_REPLY_BYTES) / bytes.length) - 1;
    if (kept < 0) kept = 0;
  }
}

const date = (value: unknown): Date | undefined => (typeof value === 'string' ? new Date(value) : undefined);

/** Throws an Error saying what is wrong. */
export function decodeReply(text: string): ExecutionRecord[] {
  const raw: unknown = JSON.parse(text);
  if (!Array.isArray(raw)) throw new Error('a reply must be a list of executions');
  return raw.map((entry: unknown, index) => {
    const r = entry as Record<string, unknown>;
    if (
      typeof r !== 'object' ||
      r === null ||
      typeof r.id !== 'string' ||
      typeof r.jobName !== 'string' ||
      typeof r.item !== 'number'
    )
      throw new Error(`execution ${index} has no id, jobName or item`);
    const orEmpty = (value: unknown): string => (typeof value === 'string' ? value : '');
    return {
      id: r.id,
      jobName: r.jobName,
      item: r.item,
      source: orEmpty(r.source),
      ip: orEmpty(r.ip),
      hostname: orEmpty(r.hostname),
      startTime: date(r.startTime),
      completeTime: date(r.completeTime),
      success: typeof r.success === 'boolean' ? r.success : undefined,
      failureCause: typeof r.failureCause === 'string' ? r.failureCause : undefined,
      ...(typeof r.instanceId === 'string' ? { instanceId: r.instanceId } : {}),
      ...(typeof r.attempt === 'number' && Number.isSafeInteger(r.attempt) ? { attempt: r.attempt } : {}),
    };
  });
}

const LEVELS: ReadonlySet<string> = new Set(['log', 'error', 'warn', 'debug', 'verbose', 'fatal']);

/** An execution's kept lines as a reply (bounded by the item's logger: 32 KB of text), or `null` for none here. */
export function encodeLinesReply(lines: ExecutionLines | undefined): Buffer {
  return Buffer.from(JSON.stringify(lines ?? null), 'utf8');
}

/** Undefined for `null` (the instance has none); throws an Error saying what is wrong. */
export function decodeLinesReply(text: string): ExecutionLines | undefined {
  const raw = JSON.parse(text) as { lines?: unknown; dropped?: unknown } | null;
  if (raw === null) return undefined;
  if (typeof raw !== 'object' || !Array.isArray(raw.lines) || typeof raw.dropped !== 'number')
    throw new Error('a lines reply must be { lines, dropped }');
  const lines: ExecutionLine[] = raw.lines.map((entry: unknown, index) => {
    const l = entry as Record<string, unknown>;
    if (
      typeof l !== 'object' ||
      l === null ||
      typeof l.at !== 'number' ||
      typeof l.message !== 'string' ||
      typeof l.level !== 'string' ||
      !LEVELS.has(l.level)
    )
      throw new Error(`line ${index} is not { at, level, message }`);
    return { at: l.at, level: l.level as ExecutionLine['level'], message: l.message };
  });
  return { lines, dropped: raw.dropped };
}

/** The latest progress of a job's running items on one instance: `{ item: { value, at } }`. */
export type ProgressReply = Record<number, { value: ItemProgress; at: number }>;

export function encodeProgressReply(progress: ReadonlyMap<number, { value: ItemProgress; at: number }>): Buffer {
  return Buffer.from(JSON.stringify({ progress: Object.fromEntries(progress) }), 'utf8');
}

/** Throws an Error saying what is wrong. */
export function decodeProgressReply(text: string): Map<number, { value: ItemProgress; at: number }> {
  const raw = JSON.parse(text) as { progress?: unknown };
  if (typeof raw !== 'object' || raw === null || typeof raw.progress !== 'object' || raw.progress === null)
    throw new Error('a progress reply must be { progress }');
  const found = new Map<number, { value: ItemProgress; at: number }>();
  for (const [key, entry] of Object.entries(raw.progress as Record<string, unknown>)) {
    const item = Number(key);
    const e = entry as { value?: unknown; at?: unknown };
    if (!Number.isSafeInteger(item) || typeof e !== 'object' || e === null || typeof e.at !== 'number')
      throw new Error(`progress of '${key.slice(0, 20)}' is not { value, at }`);
    const value = e.value;
    if (typeof value !== 'number' && (typeof value !== 'object' || value === null || Array.isArray(value)))
      throw new Error(`progress of item ${item} is neither a number nor an object`);
    found.set(item, { value: value as ItemProgress, at: e.at });
  }
  return found;
}
