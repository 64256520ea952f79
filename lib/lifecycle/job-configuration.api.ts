import {
  InvalidOperationError,
  JobConfigurationError,
  JobNotFoundError,
  RegistryError,
  registryErrorCode,
} from '../errors/elastic-job.errors.js';
import type { ShardedJobOptions } from '../interfaces/sharded-job-options.interface.js';
import type { JobConfiguration } from '../job/config/job-configuration.js';
import { resolveJobConfiguration } from '../job/config/job-configuration.validator.js';
import { fromConfigYaml, mergeConfigYaml, StoredConfigProblem } from '../job/config/job-configuration.yaml.js';
import { BUILT_IN_ERROR_HANDLER_TYPES } from '../job/execution/job-error-handlers.js';
import { BUILT_IN_SHARDING_STRATEGIES } from '../job/sharding/strategies/sharding-strategies.js';
import type { RegistryCenter } from '../registry/registry-center.js';
import { NamespaceReader } from './namespace-reader.js';

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
]);

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
   * a JobConfigurationError naming the field when the stored one cannot be read.
   */
  async get(jobName: string): Promise<JobConfiguration | undefined> {
    const yaml = await this.read.text(this.read.jobPaths(jobName, 'get configuration').config);
    return yaml === undefined ? undefined : this.parse(jobName, yaml);
  }

  /** Merges `changes` into the stored configuration, validates the result whole, and writes it. */
  async update(jobName: string, changes: JobConfigurationChanges): Promise<JobConfiguration> {
    const paths = await this.read.requireJob(jobName, 'update configuration');
    if (typeof changes !== 'object' || changes === null)
      throw new InvalidOperationError('update configuration', 'changes', 'must be an object of fields to change');
    for (const field of Object.keys(changes)) {
      if (!CHANGEABLE.has(field))
        throw new InvalidOperationError(
          'update configuration',
          field,
          `is not a field that can be changed; use ${[...CHANGEABLE].join(', ')}`,
        );
    }
    const node = await this.registry.getData(paths.config);
    if (node === undefined) throw new JobNotFoundError(jobName, await this.read.jobNames());
    const text = node.data.toString('utf8');
    const stored = this.parse(jobName, text);
    const merged = { ...stored, ...changes, jobName } as ShardedJobOptions;
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
    return updated;
  }

  /** Deletes the job's whole tree (ElasticJob's removeJobConfiguration); its running instances stop it. */
  async remove(jobName: string): Promise<void> {
    const paths = await this.read.requireJob(jobName, 'remove job');
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
      if (error instanceof StoredConfigProblem)
        throw new JobConfigurationError(jobName, error.field, `the stored configuration ${error.detail}`);
      throw error;
    }
  }
}
