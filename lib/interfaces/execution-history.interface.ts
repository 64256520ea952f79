/**
 * Recent item executions from a tracing store, for the console (`nestjs-elastic-job/console`). The PostgreSQL
 * tracing (`ElasticJobPostgresTracing`, `nestjs-elastic-job/postgres`) is one, the MySQL one (`ElasticJobMysqlTracing`,
 * `nestjs-elastic-job/mysql`) another, every instance's in-memory execution
 * log another (`ElasticJobModule` option `executionLog`); any store of the executions can be.
 */
export interface ExecutionRecord {
  /** The execution's id (ElasticJob's JobExecutionEvent id). */
  id: string;
  jobName: string;
  item: number;
  /** `NORMAL_TRIGGER`, `MISFIRE` or `FAILOVER`. */
  source: string;
  ip: string;
  hostname: string;
  startTime: Date | undefined;
  /** Undefined while it runs (or when its completion was lost). */
  completeTime: Date | undefined;
  /** Undefined while it runs. */
  success: boolean | undefined;
  /** The failure's stack or message, cut to 4000 characters as ElasticJob stores it. */
  failureCause: string | undefined;
  /** The instance that ran it, `{ip}@-@{pid}`, where the store knows it (the in-memory log; PostgreSQL has the IP only). */
  instanceId?: string;
  /** Which run of the item in its firing, when its job retries failed items (docs/guide/item-policies.md). */
  attempt?: number;
}

/** One line an item logged through `context.logger` (docs/guide/item-policies.md, "Item logs"). */
export interface ExecutionLine {
  /** Epoch milliseconds. */
  at: number;
  level: 'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal';
  message: string;
}

/** What is kept of one execution's lines: the first ones within the bounds, and how many more were logged. */
export interface ExecutionLines {
  lines: ExecutionLine[];
  /** Lines logged past the bounds (300 lines, 32 KB): counted, not kept. */
  dropped: number;
}

/** What a query keeps: finished successfully, finished with a failure, or still running. */
export type ExecutionResult = 'success' | 'failure' | 'running';

export interface ExecutionHistoryQuery {
  /** Only this job's executions. */
  jobName?: string;
  /** Only this item's. */
  item?: number;
  /**
   * Only this instance's, `{ip}@-@{pid}`, or this server's, an IP. (PostgreSQL stores the IP only: an instance id
   * matches its IP there.)
   */
  instance?: string;
  result?: ExecutionResult;
  /** Started at or after this instant. */
  from?: Date;
  /** Started before this instant. */
  to?: Date;
  /** Skip the newest this many (paging). Default 0. */
  offset?: number;
  /** The newest this many (by start time). */
  limit: number;
}

export interface ExecutionHistory {
  recentExecutions(query: ExecutionHistoryQuery): Promise<ExecutionRecord[]>;
  /**
   * One execution's kept lines, when the store keeps them (a tracing database's own table, docs/guide/item-policies.md,
   * "Item logs"); undefined when it has none of that execution (still running, not written yet, or none logged).
   */
  executionLines?(jobName: string, executionId: string): Promise<ExecutionLines | undefined>;
}

/**
 * What else files an item's kept lines as it logs them (a tracing database's provider, through
 * ElasticJobRegistry.keepItemLines): given the lines object the item's logger fills, when the item first reads
 * `context.logger`.
 */
export interface ExecutionLinesKeeper {
  keepLines(executionId: string, lines: ExecutionLines): void;
}
