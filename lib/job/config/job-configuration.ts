import type { ShardedJobOptions } from '../../interfaces/sharded-job-options.interface.js';

/** A job's configuration with every default applied: what runs, and what the config node holds. */
export interface JobConfiguration {
  jobName: string;
  cron: string;
  timeZone: string | undefined;
  shardingTotalCount: number;
  /** Canonical `0=a,1=b` form. */
  shardingItemParameters: string;
  jobParameter: string;
  monitorExecution: boolean;
  failover: boolean;
  misfire: boolean;
  maxTimeDiffSeconds: number;
  reconcileIntervalMinutes: number;
  /** A type name, resolved through the job's JobPlugins (built-in or the job's custom strategy). */
  jobShardingStrategyType: string;
  /** A type name, resolved through the job's JobPlugins (built-in or the job's custom handler). */
  jobErrorHandlerType: string;
  description: string;
  disabled: boolean;
  overwrite: boolean;
  staticSharding: boolean;
  /** ElasticJob's job properties (`props` in the config node): a typed job's settings. Empty for most jobs. */
  props: Readonly<Record<string, string>>;
}

/** ElasticJob's JobConfiguration builder defaults (docs/reference/elasticjob.md §2.1). */
export const JOB_DEFAULTS = {
  jobParameter: '',
  monitorExecution: true,
  failover: false,
  misfire: true,
  maxTimeDiffSeconds: -1,
  reconcileIntervalMinutes: 10,
  jobShardingStrategyType: 'AVG_ALLOCATION',
  jobErrorHandlerType: 'LOG',
  description: '',
  disabled: false,
  overwrite: false,
  staticSharding: false,
} as const satisfies Partial<ShardedJobOptions>;

export function typeName(value: string | { readonly type: string }): string {
  return typeof value === 'string' ? value : value.type;
}
