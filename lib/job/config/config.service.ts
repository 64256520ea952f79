import { maskSecretProps } from '../alerts/alert-props.js';
import {
  describeError,
  JobConfigurationError,
  JobConflictError,
  registryErrorCode,
} from '../../errors/elastic-job.errors.js';
import type { ShardedJobOptions } from '../../interfaces/sharded-job-options.interface.js';
import type { TransactionOp } from '../../registry/registry.types.js';
import type { JobContext } from '../context/job-context.js';
import type { JobConfiguration } from './job-configuration.js';
import { resolveJobConfiguration } from './job-configuration.validator.js';
import {
  fromConfigYaml,
  StoredConfigProblem,
  storedFormOf,
  toConfigYaml,
  type StoredJobConfiguration,
} from './job-configuration.yaml.js';

/**
 * The job's `config` node and root node (ElasticJob's ConfigurationService): the conflict check, writing our
 * configuration when ZooKeeper has none (or `overwrite`), and otherwise adopting ZooKeeper's, so that operators
 * can change a running cluster's configuration in one place.
 */
export class ConfigService {
  private lastParsed: { text: string; config: JobConfiguration } | undefined;
  /**
   * Our configuration as written into the config node, made once: writing and parsing it cost 0.8 ms a job in a
   * 1000-job start-up profile.
   */
  private ownYaml: { text: string; singleLine: boolean } | undefined;
  /** The configuration last adopted: the local one until a valid config node is read. */
  private lastGood: JobConfiguration;

  constructor(
    private readonly ctx: JobContext,
    private readonly local: JobConfiguration,
    /** `ClassName.methodName`, stored in the root node. */
    readonly owner: string,
    /** Declared by type only: the stored configuration is the job's, and none stored is an error (never written). */
    private readonly joinsStored = false,
  ) {
    this.lastGood = local;
  }

  /** Fails when the job name is registered in ZooKeeper by another method. From the job's cache (started first). */
  checkConflict(): void {
    const registered = this.ctx.storage.cached.get(this.ctx.paths.root);
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
    const yaml = this.ownConfigYaml().text;
    const root = storage.cached.get(paths.root);
    const stored = storage.cached.get(paths.config);
    if (this.joinsStored && stored === undefined)
      throw new JobConfigurationError(
        this.ctx.jobName,
        'cron',
        'is not declared: the job is declared with { jobName, type } only, to join the job stored in ZooKeeper, and ' +
          'none is stored there yet. Start the instance that defines it (a Java one, or ours with its cron, ' +
          'shardingTotalCount and props), or declare them here',
      );
    const writeConfig = stored === undefined || this.local.overwrite;
    const ops: TransactionOp[] = [];
    if (root === undefined) ops.push(storage.createOp(paths.root, this.owner));
    else if ((writeConfig || root.trim() === '') && root !== this.owner)
      ops.push(storage.setDataOp(paths.root, this.owner));
    for (const path of storage.missingSkeleton()) if (path !== paths.root) ops.push(storage.createOp(path, ''));
    if (stored === undefined) ops.push(storage.createOp(paths.config, yaml));
    else if (writeConfig && stored !== yaml) ops.push(storage.setDataOp(paths.config, yaml));
    try {
      await storage.transaction(ops, { rootCheck: false, batches: true, coalesce: true });
    } catch (error) {
      const code = registryErrorCode(error);
      if (code !== 'NODE_EXISTS' && code !== 'NO_NODE') throw error;
      await this.setUpDirectly();
    }
    await storage.cached.settled();
    // Adopting it validates it: a refused node has been logged by load(), and the local configuration runs.
    // Joined by type only: everything is the stored job's, and saying so field by field would be noise.
    if (!writeConfig && !this.joinsStored) this.reportDrift(this.load());
  }

  /**
   * The stored configuration won over this app's (overwrite: false): each field that differs is named with both
   * values, since a cron or an item count changed in code that does not take effect is a surprise otherwise.
   */
  private reportDrift(adopted: JobConfiguration): void {
    if (adopted === this.local) return; // not adopted: a refused node was logged by load(), the local one runs
    const fields = (Object.keys(this.local) as Array<keyof JobConfiguration>).filter(
      (field) =>
        field !== 'jobName' &&
        field !== 'overwrite' &&
        (field === 'props'
          ? JSON.stringify(adopted.props) !== JSON.stringify(this.local.props) // a map: compared by content
          : adopted[field] !== this.local[field]),
    );
    if (fields.length === 0) return;
    const shown = (value: unknown): string =>
      value === undefined
        ? 'none'
        : JSON.stringify(
            typeof value === 'object' && value !== null ? maskSecretProps(value as Record<string, string>) : value,
          );
    this.ctx.logger.warn(
      `the configuration stored in ZooKeeper differs from this app's and is used (overwrite: false): ` +
        fields.map((field) => `${field} ${shown(adopted[field])} (here ${shown(this.local[field])})`).join(', ') +
        `. Set overwrite: true to write this app's, or change the stored one (ElasticJobOperator, the CLI)`,
    );
  }

  /**
   * The same set-up, step by step from direct reads: the way taken when peers start at the same moment. What is
   * already there as we would write it is not written again (with `overwrite`, each of 8 processes rewrote both
   * nodes of every job, and every instance read each rewrite back: 17 reads a job per process at start-up).
   */
  private async setUpDirectly(): Promise<void> {
    const { storage, paths } = this.ctx;
    await storage.ensureSkeleton();
    const stored = await storage.direct.get(paths.config);
    const root = await storage.direct.get(paths.root);
    if (stored === undefined || this.local.overwrite) {
      if (root !== this.owner) await storage.replace(paths.root, this.owner);
      const yaml = this.ownConfigYaml().text;
      if (stored !== yaml) await storage.replace(paths.config, yaml);
      return;
    }
    if (root === undefined || root.trim() === '') await storage.replace(paths.root, this.owner);
  }

  /**
   * The configuration in force: ZooKeeper's config node (from the cache) merged over the local one. A node that is
   * not readable YAML, or that fails the validation `@ShardedJob()` gets, is refused whole (logged once, naming the
   * node and the field): the last good configuration stays in force until a valid one is written.
   */
  load(): JobConfiguration {
    // Called several times per firing: the cache's string only changes when the node does.
    const text = this.ctx.storage.cached.get(this.ctx.paths.config);
    if (text === undefined) return this.lastGood;
    if (this.lastParsed?.text === text) return this.lastParsed.config;
    let config = this.lastGood;
    try {
      // The node as we wrote it (every start after the first, and the first when we wrote it): read without parsing,
      // unless a text field has line breaks (YAML's block scalars do not give every such string back as written).
      const own = this.ownConfigYaml();
      const same = own.text === text;
      // The cache's copy from now on: one copy of the YAML a job, not two.
      if (same) own.text = text;
      const readsBack = same && own.singleLine;
      config = this.adopt(readsBack ? storedFormOf(this.local) : fromConfigYaml(text));
      this.lastGood = config;
    } catch (error) {
      // Whatever a foreign write makes the reading throw is a refusal: load() never throws (it runs in firings,
      // reactions, status and shutdown).
      const problem = error instanceof StoredConfigProblem ? error.message : `cannot be read: ${describeError(error)}`;
      const node = `${this.ctx.storage.fullPath(this.ctx.paths.config)}`;
      this.ctx.logger.error(
        `refusing the config node ${node}: ${problem}. Keeping the last good configuration ` +
          `(cron '${config.cron}', shardingTotalCount ${config.shardingTotalCount}) until a valid one is written ` +
          'there.',
      );
    }
    this.lastParsed = { text, config };
    return config;
  }

  private ownConfigYaml(): { text: string; singleLine: boolean } {
    if (!this.ownYaml) {
      const text = toConfigYaml(this.local);
      const { shardingItemParameters, jobParameter, description } = this.local;
      const singleLine = !/[\r\n]/.test(`${shardingItemParameters}${jobParameter}${description}`);
      this.ownYaml = { text, singleLine };
    }
    return this.ownYaml;
  }

  /**
   * The stored configuration over the local one, validated as `@ShardedJob()` options are (its strategy and error
   * handler must be names this job can resolve: built in, or its own custom ones); throws StoredConfigProblem.
   */
  private adopt(stored: StoredJobConfiguration): JobConfiguration {
    const storedOneOff = stored.cron === undefined || stored.cron === '';
    // No cron is how ElasticJob's OneOffJobBootstrap stores a one-off job: adopted as one only by a one-off job here;
    // a job this app schedules by cron refuses a node that lost its cron.
    if (storedOneOff && this.local.cron !== '') throw new StoredConfigProblem('cron', 'is missing');
    try {
      return resolveJobConfiguration(
        {
          jobName: this.local.jobName,
          ...(storedOneOff ? { oneOff: true } : { cron: stored.cron }),
          timeZone: stored.timeZone,
          shardingTotalCount: stored.shardingTotalCount,
          shardingItemParameters: stored.shardingItemParameters,
          jobParameter: stored.jobParameter,
          monitorExecution: stored.monitorExecution,
          failover: stored.failover,
          misfire: stored.misfire,
          maxTimeDiffSeconds: stored.maxTimeDiffSeconds,
          reconcileIntervalMinutes: stored.reconcileIntervalMinutes,
          jobShardingStrategyType: (stored.jobShardingStrategyType ??
            this.local.jobShardingStrategyType) as ShardedJobOptions['jobShardingStrategyType'],
          jobErrorHandlerType: (stored.jobErrorHandlerType ??
            this.local.jobErrorHandlerType) as ShardedJobOptions['jobErrorHandlerType'],
          description: stored.description,
          disabled: stored.disabled,
          overwrite: this.local.overwrite,
          staticSharding: stored.staticSharding,
          props: stored.props,
        },
        this.ctx.plugins.names(),
      );
    } catch (error) {
      if (error instanceof JobConfigurationError) throw new StoredConfigProblem(error.field, error.detail);
      throw error;
    }
  }
}
