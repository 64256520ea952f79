/**
 * Recent item executions from a tracing store, for the console (`nestjs-elastic-job/console`). The PostgreSQL
 * tracing (`ElasticJobPostgresTracing`, `nestjs-elastic-job/postgres`) is one; any store of the executions can be.
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
}

export interface ExecutionHistoryQuery {
  /** Only this job's executions. */
  jobName?: string;
  /** The newest this many (by start time). */
  limit: number;
}

export interface ExecutionHistory {
  recentExecutions(query: ExecutionHistoryQuery): Promise<ExecutionRecord[]>;
}
