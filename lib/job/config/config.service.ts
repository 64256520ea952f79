import { JobConflictError } from '../../errors/elastic-job.errors.js';
import type { TransactionOp } from '../../registry/registry.types.js';
import { registryErrorCode } from '../../registry/zookeeper-registry-center.js';
import { validateCron, validateTimeZone } from '../../schedule/cron-expression.js';
import { BUILT_IN_SHARDING_STRATEGIES } from '../sharding/strategies/sharding-strategies.js';
import { parseShardingItemParameters } from '../sharding/sharding-item-parameters.js';
import type { JobContext } from '../job-context.js';
import { typeName, type JobConfiguration } from './job-configuration.js';
import { fromConfigYaml, toConfigYaml, type StoredJobConfiguration } from './job-configuration.yaml.js';

/**
 * The job's `config` node and root node (ElasticJob's ConfigurationService): the conflict check, writing our
 * configuration when ZooKeeper has none (or `overwrite`), and otherwise adopting ZooKeeper's, so that operators
 * can change a running cluster's configuration in one place.
 */
export class ConfigService {
  private lastParsed: { bytes: Buffer; config: JobConfiguration } | undefined;

  constructor(
    private readonly ctx: JobContext,
    private readonly local: JobConfiguration,
    /** `ClassName.methodName`, stored in the root node. */
    readonly owner: string,
  ) {}

  /** Fails when the job name is registered in ZooKeeper by another method. Reads only. */
  async checkConflict(): Promise<void> {
    const registered = await this.ctx.storage.getDirectly(this.ctx.paths.root);
    if (registered !== undefined && registered.trim() !== '' && registered !== this.owner) {
      throw new JobConflictError(this.ctx.jobName, registered, this.owner);
    }
  }

  /**
   * Writes config + root when absent or `overwrite`; otherwise keeps ZooKeeper's config. Planned from the job's
   * cache (started first): what is missing or different goes in one transaction, and a new job's whole tree is
   * one request. When a peer sets the job up at the same moment, the transaction fails and the step-by-step way,
   * reading ZooKeeper directly, takes over.
   */
  async setUp(): Promise<void> {
    const { storage, paths } = this.ctx;
    const yaml = toConfigYaml(this.local);
    const root = storage.get(paths.root);
    const stored = storage.get(paths.config);
    const writeConfig = stored === undefined || this.local.overwrite;
    const ops: TransactionOp[] = [];
    if (root === undefined) ops.push(storage.createOp(paths.root, this.owner));
    else if ((writeConfig || root.trim() === '') && root !== this.owner) ops.push(storage.setDataOp(paths.root, this.owner));
    for (const path of storage.missingSkeleton()) if (path !== paths.root) ops.push(storage.createOp(path, ''));
    if (stored === undefined) ops.push(storage.createOp(paths.config, yaml));
    else if (writeConfig && stored !== yaml) ops.push(storage.setDataOp(paths.config, yaml));
    try {
      await storage.transactionWithoutRootCheck(ops);
    } catch (error) {
      const code = registryErrorCode(error);
      if (code !== 'NODE_EXISTS' && code !== 'NO_NODE') throw error;
      await this.setUpDirectly();
    }
    await storage.settled();
    if (!writeConfig) this.ctx.logger.log('using the configuration stored in ZooKeeper (set overwrite: true to replace it with the local one)');
  }

  /** The same set-up, step by step from direct reads. */
  private async setUpDirectly(): Promise<void> {
    await this.ctx.storage.ensureSkeleton();
    const stored = await this.ctx.storage.getDirectly(this.ctx.paths.config);
    if (stored === undefined || this.local.overwrite) {
      await this.ctx.storage.persist(this.ctx.paths.root, this.owner);
      await this.ctx.storage.persist(this.ctx.paths.config, toConfigYaml(this.local));
      return;
    }
    const root = await this.ctx.storage.getDirectly(this.ctx.paths.root);
    if (root === undefined || root.trim() === '') await this.ctx.storage.persist(this.ctx.paths.root, this.owner);
  }

  /** The configuration in force: ZooKeeper's config node (from the cache) merged over the local one. */
  load(): JobConfiguration {
    // Called several times per firing: the node's Buffer only changes when the node does.
    const bytes = this.ctx.storage.getBytes(this.ctx.paths.config);
    if (bytes === undefined) return this.local;
    if (this.lastParsed?.bytes === bytes) return this.lastParsed.config;
    let config = this.local;
    try {
      config = this.merge(fromConfigYaml(bytes.toString('utf8')));
    } catch (error) {
      this.ctx.logger.error(`the config node is not readable YAML, using the local configuration: ${error instanceof Error ? error.message : String(error)}`);
    }
    this.lastParsed = { bytes, config };
    return config;
  }

  private merge(stored: StoredJobConfiguration): JobConfiguration {
    const merged: JobConfiguration = { ...this.local };
    const warn = (field: string, why: string): void => this.ctx.logger.warn(`ignoring '${field}' from ZooKeeper's config node: ${why}`);
    if (stored.cron !== undefined) {
      const problem = validateTimeZone(stored.timeZone) ?? validateCron(stored.cron, stored.timeZone);
      if (problem) warn('cron', problem);
      else {
        merged.cron = stored.cron;
        merged.timeZone = stored.timeZone;
      }
    }
    if (Number.isInteger(stored.shardingTotalCount) && stored.shardingTotalCount > 0) merged.shardingTotalCount = stored.shardingTotalCount;
    else warn('shardingTotalCount', `${stored.shardingTotalCount} is not an integer > 0`);
    if (typeof parseShardingItemParameters(stored.shardingItemParameters) === 'string') warn('shardingItemParameters', `'${stored.shardingItemParameters}' is malformed`);
    else merged.shardingItemParameters = stored.shardingItemParameters;
    merged.jobParameter = stored.jobParameter;
    merged.monitorExecution = stored.monitorExecution;
    merged.failover = stored.failover;
    merged.misfire = stored.misfire;
    merged.maxTimeDiffSeconds = stored.maxTimeDiffSeconds;
    merged.reconcileIntervalMinutes = stored.reconcileIntervalMinutes;
    merged.description = stored.description;
    merged.disabled = stored.disabled;
    merged.staticSharding = stored.staticSharding;
    const strategy = stored.jobShardingStrategyType;
    if (strategy !== undefined && strategy !== typeName(this.local.jobShardingStrategyType)) {
      if (strategy in BUILT_IN_SHARDING_STRATEGIES) merged.jobShardingStrategyType = strategy as keyof typeof BUILT_IN_SHARDING_STRATEGIES;
      else warn('jobShardingStrategyType', `'${strategy}' is not built in and not the local custom strategy`);
    }
    const handler = stored.jobErrorHandlerType;
    if (handler !== undefined && handler !== typeName(this.local.jobErrorHandlerType)) {
      if (handler === 'LOG' || handler === 'THROW' || handler === 'IGNORE') merged.jobErrorHandlerType = handler;
      else warn('jobErrorHandlerType', `'${handler}' is not built in and not the local custom handler`);
    }
    return merged;
  }
}
