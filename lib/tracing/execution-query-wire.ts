import type {
  ExecutionHistoryQuery,
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
}

export function encodeQuery(request: ExecutionQueryRequest): Buffer {
  const { query } = request;
  return Buffer.from(
    JSON.stringify({
      instances: request.instances,
      query: { ...query, from: query.from?.toISOString(), to: query.to?.toISOString() },
    }),
    'utf8',
  );
}

/** Throws an Error saying what is wrong. */
export function decodeQuery(text: string): ExecutionQueryRequest {
  const raw = JSON.parse(text) as { instances?: unknown; query?: Record<string, unknown> };
  if (!Array.isArray(raw.instances) || !raw.instances.every((id) => typeof id === 'string'))
    throw new Error('instances must be a list of instance ids');
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
    };
  });
}
