import type { ExecutionRecord } from '../../interfaces/execution-history.interface.js';
import type { JobBriefInfo, JobBriefStatus, JobServerInfo, ShardingInfo } from '../../lifecycle/lifecycle.types.js';

/**
 * What the console's routes answer and its live stream tells: the server's types, which the page reads as JSON
 * (`Wire<...>`, util/wire.ts), so both sides use one set.
 */

/** A row of the jobs list: ElasticJob's JobBriefInfo, with the zone and next fire time of its cron. */
export interface ConsoleJobRow extends JobBriefInfo {
  timeZone: string | undefined;
  /** ISO instant; undefined for a one-off job or a cron that cannot be read. */
  nextFireTime: string | undefined;
}

export interface ConsoleJobsPage {
  total: number;
  offset: number;
  limit: number;
  /** Jobs per status over the whole namespace, for the filter. */
  counts: Record<JobBriefStatus, number>;
  jobs: ConsoleJobRow[];
}

export interface ConsoleJobDetail {
  job: ConsoleJobRow;
  /** The next five fire times (ISO instants), in the job's zone's reading of its cron; none for a one-off job. */
  nextFireTimes: string[];
  /** The configuration fields the page shows (no secrets are kept in a job's configuration). */
  config: {
    shardingItemParameters: string;
    jobParameter: string;
    failover: boolean;
    misfire: boolean;
    monitorExecution: boolean;
    jobShardingStrategyType: string | undefined;
    overwrite: boolean;
    maxTimeDiffSeconds: number;
  };
  /** A typed job's properties (HTTP, SCRIPT: `http.uri`, `script.command.line`, ...); empty for other jobs. */
  props: Readonly<Record<string, string>>;
  sharding: ShardingInfo[];
  servers: JobServerInfo[];
}

/**
 * Executions for the page: from the app's tracing store (`database`), or gathered from every instance's in-memory log
 * (`cluster`), then with the instances that answered and those that did not in time.
 */
export type ConsoleExecutions =
  | { source: 'database'; executions: ExecutionRecord[] }
  | { source: 'cluster'; executions: ExecutionRecord[]; answered: string[]; missing: string[] };

/** What the page is told over its live stream. */
export type ConsoleChange =
  | { type: 'jobs'; jobNames: readonly string[] }
  | { type: 'resync' }
  | { type: 'connection'; connected: boolean }
  | { type: 'executions' }
  /** The runs of these workflows changed (a step moved, a run began or ended). */
  | { type: 'workflows'; workflows: readonly string[] };
