import type { ElasticJobEvent } from '../events/elastic-job-event.types.js';
import type { ExecutionLines } from '../interfaces/execution-history.interface.js';
import type {
  ExecutionHistory,
  ExecutionHistoryQuery,
  ExecutionRecord,
} from '../interfaces/execution-history.interface.js';

/** ElasticJob's cut of a failure cause (its JOB_EXECUTION_LOG column): a stack kept whole enough to read. */
const MAX_CAUSE_CHARACTERS = 4000;
export const DEFAULT_EXECUTION_LOG_SIZE = 500;
export const MAX_EXECUTION_LOG_SIZE = 100_000;

/** What matches a query: its fields, each only when given. */
export function matchesQuery(record: ExecutionRecord, query: ExecutionHistoryQuery): boolean {
  if (query.jobName !== undefined && record.jobName !== query.jobName) return false;
  if (query.item !== undefined && record.item !== query.item) return false;
  if (query.instance !== undefined && record.instanceId !== query.instance && record.ip !== query.instance)
    return false;
  if (query.result !== undefined) {
    const result = record.success === undefined ? 'running' : record.success ? 'success' : 'failure';
    if (result !== query.result) return false;
  }
  const start = record.startTime?.getTime();
  if (query.from !== undefined && (start === undefined || start < query.from.getTime())) return false;
  if (query.to !== undefined && (start === undefined || start >= query.to.getTime())) return false;
  return true;
}

/** Newest first by start time, then by id: the order every store answers in, so pages of merged answers line up. */
export function newestFirst(a: ExecutionRecord, b: ExecutionRecord): number {
  const byStart = (b.startTime?.getTime() ?? 0) - (a.startTime?.getTime() ?? 0);
  return byStart !== 0 ? byStart : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * This process's recent item executions, kept in memory (no database): the last `size` of them, each from its start
 * to its end with the error's stack, as the `item.started` and `item.completed` events tell them. Bounded in count
 * (the oldest go first) and in each record's size (the stack cut as ElasticJob cuts it). The console asks every
 * instance for its log (docs/guide/console.md, "Execution history without a database").
 */
export class ExecutionLog implements ExecutionHistory {
  /** Oldest first; a record is updated in place when its item completes. */
  private readonly records: ExecutionRecord[] = [];
  private readonly byId = new Map<string, ExecutionRecord>();
  /**
   * The lines items logged through `context.logger`, by execution id, the oldest going first past `size` executions
   * (each bounded by the item's logger: job/policies/item-lines.ts). The array is the logger's own: a running item's
   * lines show as they come.
   */
  private readonly linesById = new Map<string, ExecutionLines>();

  constructor(readonly size: number = DEFAULT_EXECUTION_LOG_SIZE) {}

  /** Takes the item events; the others pass by. */
  record(event: ElasticJobEvent): void {
    if (event.type === 'item.started') {
      const record: ExecutionRecord = {
        id: event.id,
        jobName: event.jobName,
        item: event.shardingItem,
        source: event.source,
        ip: event.ip,
        hostname: event.hostname,
        startTime: event.startTime,
        completeTime: undefined,
        success: undefined,
        failureCause: undefined,
        instanceId: event.instanceId,
      };
      if (event.attempt !== undefined) record.attempt = event.attempt;
      this.records.push(record);
      this.byId.set(record.id, record);
      if (this.records.length > this.size) this.byId.delete(this.records.shift()!.id);
    } else if (event.type === 'item.completed') {
      const record = this.byId.get(event.id);
      if (!record) return; // started before the log began, or pushed out already
      record.completeTime = event.completeTime;
      record.success = event.success;
      record.failureCause = event.failureCause?.slice(0, MAX_CAUSE_CHARACTERS);
    }
  }

  /** Files an execution's kept lines (its logger's own object, filled as the item logs). */
  keepLines(executionId: string, lines: ExecutionLines): void {
    this.linesById.set(executionId, lines);
    if (this.linesById.size > this.size) this.linesById.delete(this.linesById.keys().next().value!);
  }

  /** An execution's kept lines, copied; undefined when it logged none here (or they were pushed out). */
  lines(executionId: string): ExecutionLines | undefined {
    const kept = this.linesById.get(executionId);
    return kept === undefined ? undefined : { lines: [...kept.lines], dropped: kept.dropped };
  }

  /** The newest matching executions, newest first, `offset` skipped. */
  query(query: ExecutionHistoryQuery): ExecutionRecord[] {
    const offset = query.offset ?? 0;
    const found: ExecutionRecord[] = [];
    for (let i = this.records.length - 1; i >= 0 && found.length < offset + query.limit; i--) {
      const record = this.records[i]!;
      if (matchesQuery(record, query)) found.push({ ...record });
    }
    return found.sort(newestFirst).slice(offset, offset + query.limit);
  }

  recentExecutions(query: ExecutionHistoryQuery): Promise<ExecutionRecord[]> {
    return Promise.resolve(this.query(query));
  }
}
