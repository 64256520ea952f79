import type { ItemProgress } from '../interfaces/sharding-context.interface.js';
/**
 * What the operator API returns: ElasticJob's lifecycle domain objects (`JobBriefInfo`, `ServerBriefInfo`,
 * `ShardingInfo` in its `lifecycle` module, docs/reference/elasticjob.md §6), with the same fields and rules.
 */

/**
 * A job's health as ElasticJob's console shows it, first match wins: `CRASHED` (no instance online), `DISABLED`
 * (every server disabled), `SHARDING_FLAG` (an item assigned to an instance that is gone, or none assigned yet),
 * `OK`. For one server (`getJobsBriefInfo(ip)`): `DISABLED` or `OK`.
 */
export const JOB_BRIEF_STATUSES = ['OK', 'CRASHED', 'DISABLED', 'SHARDING_FLAG'] as const;
export type JobBriefStatus = (typeof JOB_BRIEF_STATUSES)[number];

export interface JobBriefInfo {
  jobName: string;
  status: JobBriefStatus;
  description: string;
  /** In this library's dialect (as `@ShardedJob` takes it); undefined when the stored one cannot be read. */
  cron: string | undefined;
  /** Instances online: all of them, or those on the server asked about. */
  instanceCount: number;
  shardingTotalCount: number;
}

export interface ServerBriefInfo {
  serverIp: string;
  /** Instance ids online on this server, over every job. */
  instances: string[];
  /** Jobs with a `servers/{ip}` node for this server. */
  jobNames: string[];
  instancesNum: number;
  jobsNum: number;
  /** Jobs in which this server is disabled. */
  disabledJobsNum: number;
}

/** One server of one job: `servers/{ip}` (`DISABLED` or anything else, enabled) and its instances online. */
export interface JobServerInfo {
  serverIp: string;
  status: 'ENABLED' | 'DISABLED';
  instances: string[];
}

/**
 * An item's state, first match wins: `DISABLED` (`sharding/{i}/disabled`), `RUNNING` (`sharding/{i}/running`),
 * `SHARDING_FLAG` (assigned to an instance that is not online), `PENDING` (waiting for its next firing).
 */
export type ShardingItemStatus = 'DISABLED' | 'RUNNING' | 'SHARDING_FLAG' | 'PENDING';

export interface ShardingInfo {
  item: number;
  /** The assigned instance, while it is online (undefined otherwise, where ElasticJob's console fails, #2060). */
  instanceId: string | undefined;
  serverIp: string | undefined;
  status: ShardingItemStatus;
  /** A peer has taken the item over from a crashed instance (`sharding/{i}/failover`). */
  failover: boolean;
  /**
   * The latest progress the running item reported (`context.reportProgress()`), asked of its instance when
   * `getShardingInfo(jobName, { progress: true })` (docs/guide/item-policies.md, "Progress").
   */
  progress?: { value: ItemProgress; at: Date };
}

/**
 * Which instances an operation applies to, as ElasticJob's JobOperateAPI takes them: a job on every server, a
 * server in every job, or one job on one server. At least one of the two.
 */
export interface OperationTarget {
  jobName?: string;
  serverIp?: string;
}
