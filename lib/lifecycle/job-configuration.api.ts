import {
  InvalidOperationError,
  JobConfigurationError,
  JobNotFoundError,
  quoteInput,
  RegistryError,
  registryErrorCode,
  StoredConfigurationError,
} from '../errors/elastic-job.errors.js';
import type { ShardedJobOptions } from '../interfaces/sharded-job-options.interface.js';
import type { JobConfiguration } from '../job/config/job-configuration.js';
import { resolveJobConfiguration } from '../job/config/job-configuration.validator.js';
import { fromConfigYaml, mergeConfigYaml, StoredConfigProblem } from '../job/config/job-configuration.yaml.js';
import { BUILT_IN_ERROR_HANDLER_TYPES } from '../job/plugins/job-error-handlers.js';
import { keepMaskedSecrets, maskSecretProps } from '../job/alerts/alert-props.js';
import { BUILT_IN_SHARDING_STRATEGIES } from '../job/plugins/sharding-strategies.js';
import type { RegistryCenter } from '../registry/registry-center.js';
import { NamespaceReader } from './namespace-reader.js';
import { checkJobName, checkKeys } from './operator-input.js';

/** What an update may change: any field of the stored configuration but the job's name. */
export type JobConfigurationChanges = Partial<Omit<JobConfiguration, 'jobName'>>;

const CHANGEABLE: ReadonlySet<string> = new Set<keyof JobConfigurationChanges>([
  'cron',
  'timeZone',
  'shardingTotalCount',
  'shardingItemParameters',
  'jobParameter',
  'monitorExecution',
  'failover',
  'misfire',
  'maxTimeDiffSeconds',
  'reconcileIntervalMinutes',
  'jobShardingStrategyType',
  'jobErrorHandlerType',
  'description',
  'disabled',
  'overwrite',
  'staticSharding',
  // A typed job's properties, replaced whole (HTTP's http.uri, SCRIPT's script.command.line, ...).
  'props',
]);

/** Longest text a configuration update may set in one field, in UTF-8 bytes (the whole node must stay far below 1 MB). */
export const MAX_CONFIG_TEXT_BYTES = 64 * 1024;

/**
 * The shape of an update, checked before anything is read: the job's name, an object of fields this API changes, text
 * fields within MAX_CONFIG_TEXT_BYTES. Their values are validated against the merged configuration afterwards.
 */
export function checkConfigurationChanges(jobName: unknown, changes: unknown): void {
  const operation = 'updateJobConfiguration';
  checkJobName(jobName, operation);
  if (typeof changes !== 'object' || changes === null || Array.isArray(changes))
    throw new InvalidOperationError(
      operation,
      'changes',
      `must be an object of fields to change, got ${quoteInput(changes)}`,
    );
  checkKeys(changes, [...CHANGEABLE], operation);
  for (const [field, value] of Object.entries(changes)) {
    if (typeof value === 'string' && Buffer.byteLength(value, 'utf8') > MAX_CONFIG_TEXT_BYTES)
      throw new InvalidOperationError(
        operation,
        field,
        `is ${Buffer.byteLength(value, 'utf8')} bytes long; at most ${MAX_CONFIG_TEXT_BYTES}`,
      );
  }
}

/**
 * ElasticJob's JobConfigurationAPI (docs/reference/elasticjob.md §6): the config node, read from ZooKeeper on every
 * call (ElasticJob's reads a cache that may be stale, #2526), updated with the validation `@ShardedJob()` options
 * get, so that no instance has to refuse what an operator wrote. Running instances pick an update up at once:
 * a new cron reschedules, a new shardingTotalCount reshards. Keys this library does not model (a Java job's
 * `props`, `jobExtraConfigurations`, ...) are kept, and the write is made only over the version that was read.
 */
export class JobConfigurationApi {
  private readonly read: NamespaceReader;

  constructor(private readonly registry: RegistryCenter) {
    this.read = new NamespaceReader(registry);
  }

  /**
   * The job's stored configuration (cron in this library's dialect); undefined when the job has no config node;
   * a StoredConfigurationError (a JobConfigurationError) naming the field when the stored one cannot be read.
   */
  async get(jobName: string): Promise<JobConfiguration | undefined> {
    const yaml = await this.read.text(this.read.jobPaths(jobName, 'getJobConfiguration').config);
    return yaml === undefined ? undefined : masked(this.parse(jobName, yaml));
  }

  /** Merges `changes` into the stored configuration, validates the result whole, and writes it. */
  async update(jobName: string, changes: JobConfigurationChanges): Promise<JobConfiguration> {
    checkConfigurationChanges(jobName, changes);
    const paths = await this.read.requireJob(jobName, 'updateJobConfiguration');
    const node = await this.registry.getData(paths.config);
    if (node === undefined) throw new JobNotFoundError(jobName);
    const text = node.data.toString('utf8');
    const stored = this.parse(jobName, text);
    // Secrets are shown masked (an alert handler's password, a robot's URL): sent back so, they keep their value.
    const kept =
      changes.props && typeof changes.props === 'object'
        ? { ...changes, props: keepMaskedSecrets(changes.props, stored.props) }
        : changes;
    const merged = { ...stored, ...kept, jobName } as ShardedJobOptions;
    // Names the job's instances can resolve: built in, or the custom ones the stored configuration already names.
    const known = {
      strategies: [...new Set([...Object.keys(BUILT_IN_SHARDING_STRATEGIES), stored.jobShardingStrategyType])],
      errorHandlers: [...new Set([...BUILT_IN_ERROR_HANDLER_TYPES, stored.jobErrorHandlerType])],
    };
    const updated = resolveJobConfiguration(merged, known);
    // Only over what was read: another operator's update meanwhile is not overwritten unseen.
    try {
      await this.registry.transaction([
        { op: 'check', path: paths.config, version: node.stat.version },
        { op: 'setData', path: paths.config, data: Buffer.from(mergeConfigYaml(text, updated), 'utf8') },
      ]);
    } catch (error) {
      if (registryErrorCode(error) !== 'BAD_VERSION') throw error;
      throw new RegistryError(
        'BAD_VERSION',
        paths.config,
        `Job '${jobName}': its configuration changed while this update was being made; read it again and retry`,
        { cause: error },
      );
    }
    return masked(updated);
  }

  /** Deletes the job's whole tree (ElasticJob's removeJobConfiguration); its running instances stop it. */
  async remove(jobName: string): Promise<void> {
    const paths = await this.read.requireJob(jobName, 'removeJob');
    await this.registry.removeRecursive(paths.root);
  }

  private parse(jobName: string, yaml: string): JobConfiguration {
    try {
      const stored = fromConfigYaml(yaml);
      return resolveJobConfiguration(
        {
          ...stored,
          // No cron: a one-off job, as ElasticJob's OneOffJobBootstrap stores it.
          ...(stored.cron === undefined || stored.cron === ''
            ? { cron: undefined, oneOff: true }
            : { cron: stored.cron }),
          jobName,
          jobShardingStrategyType: stored.jobShardingStrategyType ?? 'AVG_ALLOCATION',
          jobErrorHandlerType: stored.jobErrorHandlerType ?? 'LOG',
        } as ShardedJobOptions,
        {
          strategies: [...Object.keys(BUILT_IN_SHARDING_STRATEGIES), stored.jobShardingStrategyType ?? ''],
          errorHandlers: [...BUILT_IN_ERROR_HANDLER_TYPES, stored.jobErrorHandlerType ?? ''],
        },
      );
    } catch (error) {
      // What is stored is not the caller's mistake: said as the stored data's (INVALID_STORED_DATA).
      if (error instanceof StoredConfigProblem)
        throw new StoredConfigurationError(jobName, error.field, `the stored configuration ${error.detail}`);
      if (error instanceof JobConfigurationError)
        throw new StoredConfigurationError(jobName, error.field, `the stored configuration: ${error.detail}`);
      throw error;
    }
  }
}

/** The configuration as the operator's surfaces show it: the alert handlers' secrets masked (docs/guide/alerts.md). */
function masked(config: JobConfiguration): JobConfiguration {
  const props = maskSecretProps(config.props);
  return props === config.props ? config : { ...config, props };
}
