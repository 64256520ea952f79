import { parse, stringify } from 'yaml';
import { typeName, type JobConfiguration } from './job-configuration.js';

/**
 * The config node's YAML, as ElasticJob writes it (EJ §1.4): keys in alphabetical order, nulls omitted, every
 * boolean written (a Java reader takes a missing boolean as false).
 */
export function toConfigYaml(config: JobConfiguration): string {
  const pojo: Record<string, string | number | boolean | undefined> = {
    cron: config.cron,
    description: config.description,
    disabled: config.disabled,
    failover: config.failover,
    jobErrorHandlerType: typeName(config.jobErrorHandlerType),
    jobName: config.jobName,
    jobParameter: config.jobParameter,
    jobShardingStrategyType: typeName(config.jobShardingStrategyType),
    maxTimeDiffSeconds: config.maxTimeDiffSeconds,
    misfire: config.misfire,
    monitorExecution: config.monitorExecution,
    overwrite: config.overwrite,
    reconcileIntervalMinutes: config.reconcileIntervalMinutes,
    shardingItemParameters: config.shardingItemParameters,
    shardingTotalCount: config.shardingTotalCount,
    staticSharding: config.staticSharding,
    timeZone: config.timeZone,
  };
  const present = Object.fromEntries(Object.entries(pojo).filter(([, value]) => value !== undefined));
  return stringify(present, { sortMapEntries: true, singleQuote: true, lineWidth: 0 });
}

/** The fields of a config node we act on, as ElasticJob's JobConfigurationPOJO reads them (missing booleans: false). */
export interface StoredJobConfiguration {
  cron?: string;
  timeZone?: string;
  shardingTotalCount: number;
  shardingItemParameters: string;
  jobParameter: string;
  monitorExecution: boolean;
  failover: boolean;
  misfire: boolean;
  maxTimeDiffSeconds: number;
  reconcileIntervalMinutes: number;
  jobShardingStrategyType?: string;
  jobErrorHandlerType?: string;
  description: string;
  disabled: boolean;
  overwrite: boolean;
  staticSharding: boolean;
}

/** Reads a config node written by us or by Java ElasticJob (extra keys such as `props` are ignored). Throws on bad YAML. */
export function fromConfigYaml(text: string): StoredJobConfiguration {
  // SnakeYAML may tag nested objects (jobExtraConfigurations): keep them as plain data.
  const raw = (parse(text, { customTags: [], logLevel: 'silent' }) ?? {}) as Record<string, unknown>;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new Error('config node is not a YAML map');
  const str = (key: string): string | undefined => (raw[key] === undefined || raw[key] === null ? undefined : String(raw[key]));
  const num = (key: string, fallback: number): number => (typeof raw[key] === 'number' ? (raw[key] as number) : Number(raw[key] ?? fallback));
  const bool = (key: string): boolean => raw[key] === true || raw[key] === 'true';
  return {
    cron: str('cron'),
    timeZone: str('timeZone'),
    shardingTotalCount: num('shardingTotalCount', 0),
    shardingItemParameters: str('shardingItemParameters') ?? '',
    jobParameter: str('jobParameter') ?? '',
    monitorExecution: bool('monitorExecution'),
    failover: bool('failover'),
    misfire: bool('misfire'),
    maxTimeDiffSeconds: num('maxTimeDiffSeconds', -1),
    reconcileIntervalMinutes: num('reconcileIntervalMinutes', 0),
    jobShardingStrategyType: str('jobShardingStrategyType'),
    jobErrorHandlerType: str('jobErrorHandlerType'),
    description: str('description') ?? '',
    disabled: bool('disabled'),
    overwrite: bool('overwrite'),
    staticSharding: bool('staticSharding'),
  };
}
