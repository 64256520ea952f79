import { Logger } from '@nestjs/common';
import { NamespaceWatch, type NamespaceChange } from './namespace-watch.js';
import { RegistryError, withinBound } from '../errors/elastic-job.errors.js';
import type { ZookeeperConfiguration } from '../interfaces/module-options.interface.js';
import type { JobConfiguration } from '../job/config/job-configuration.js';
import { awaitConnection, type RegistryCenter } from '../registry/registry-center.js';
import { ZookeeperRegistryCenter } from '../registry/zookeeper-registry-center.js';
import { DEFAULT_ZOOKEEPER_SETTINGS, validateZookeeperOptions } from '../registry/zookeeper-settings.js';
import { JobConfigurationApi, type JobConfigurationChanges } from './job-configuration.api.js';
import { JobOperateApi, type OperatedNode } from './job-operate.api.js';
import { JobStatisticsApi } from './job-statistics.api.js';
import type { JobBriefInfo, JobServerInfo, OperationTarget, ServerBriefInfo, ShardingInfo } from './lifecycle.types.js';
import { ServerStatisticsApi } from './server-statistics.api.js';
import { ShardingOperateApi } from './sharding-operate.api.js';
import { ShardingStatisticsApi } from './sharding-statistics.api.js';

/** ElasticJob's six lifecycle APIs over one registry center. */
interface Apis {
  registry: RegistryCenter;
  jobStatistics: JobStatisticsApi;
  serverStatistics: ServerStatisticsApi;
  shardingStatistics: ShardingStatisticsApi;
  jobOperate: JobOperateApi;
  shardingOperate: ShardingOperateApi;
  jobConfiguration: JobConfigurationApi;
}

/**
 * Operates a namespace's jobs, running or not, from any Node program or Nest app: ElasticJob's lifecycle API
 * (docs/reference/elasticjob.md §6) in one object, writing the same znodes, so that ElasticJob's Java tools and
 * this one steer the same clusters. Every read goes to ZooKeeper (no cache).
 *
 * - In a Nest app that imports ElasticJobModule: inject it; it shares the app's session (and opens one for an
 *   app without jobs).
 * - Anywhere else: `await ElasticJobOperator.connect({ serverLists, namespace })`, then `close()`.
 *
 * Reads of one job resolve undefined (or empty) when it does not exist; operations on a job that does not exist
 * reject with a JobNotFoundError, bad arguments with an InvalidOperationError, ZooKeeper trouble with a
 * RegistryError. @publicApi
 */
export class ElasticJobOperator {
  private apis: Apis | undefined;
  private closed = false;

  private constructor(
    private readonly registry: () => Promise<RegistryCenter>,
    /** How long a call waits for a connection before it rejects (a disconnected client would hold it). */
    private readonly connectionTimeoutMs: number,
    private readonly release: () => Promise<void> = async () => undefined,
  ) {}

  /**
   * Over a registry center that stays its owner's: close() leaves it open. For the module's provider and tests.
   * @internal
   */
  static over(
    registry: RegistryCenter | (() => Promise<RegistryCenter>),
    connectionTimeoutMs: number = DEFAULT_ZOOKEEPER_SETTINGS.connectionTimeoutMilliseconds,
  ): ElasticJobOperator {
    return new ElasticJobOperator(
      typeof registry === 'function' ? registry : async () => registry,
      connectionTimeoutMs,
    );
  }

  /**
   * With a session of its own (the module's `zookeeper` options). Rejects with a RegistryError (`CONNECTION_LOSS`)
   * when ZooKeeper does not answer within the connection timeout, a JobConfigurationError for bad options.
   */
  static async connect(zookeeper: ZookeeperConfiguration): Promise<ElasticJobOperator> {
    validateZookeeperOptions(zookeeper);
    const registry = await ZookeeperRegistryCenter.open(zookeeper, 'check serverLists and that ZooKeeper runs');
    return new ElasticJobOperator(
      async () => registry,
      registry.settings.connectionTimeoutMilliseconds,
      () => registry.close(),
    );
  }

  /** Closes the session when it is this operator's own; later calls reject with a RegistryError (`CLOSED`). */
  close(): Promise<void> {
    this.closed = true;
    return this.release();
  }

  // ---------------------------------------------------------------- statistics

  /** Every job of the namespace, by name (ElasticJob's getAllJobsBriefInfo). */
  async getAllJobsBriefInfo(): Promise<JobBriefInfo[]> {
    return this.run('getAllJobsBriefInfo', (apis) => apis.jobStatistics.getAllJobsBriefInfo());
  }

  async getJobBriefInfo(jobName: string): Promise<JobBriefInfo | undefined> {
    return this.run('getJobBriefInfo', (apis) => apis.jobStatistics.getJobBriefInfo(jobName));
  }

  /** The jobs one server takes part in, with its status and instances there. */
  async getJobsBriefInfo(serverIp: string): Promise<JobBriefInfo[]> {
    return this.run('getJobsBriefInfo', (apis) => apis.jobStatistics.getJobsBriefInfo(serverIp));
  }

  async getAllServersBriefInfo(): Promise<ServerBriefInfo[]> {
    return this.run('getAllServersBriefInfo', (apis) => apis.serverStatistics.getAllServersBriefInfo());
  }

  /** One job's servers with their status in it and instances online: undefined when there is no such job. */
  async getJobServersInfo(jobName: string): Promise<JobServerInfo[] | undefined> {
    return this.run('getJobServersInfo', (apis) => apis.serverStatistics.getJobServersInfo(jobName));
  }

  async getShardingInfo(jobName: string): Promise<ShardingInfo[]> {
    return this.run('getShardingInfo', (apis) => apis.shardingStatistics.getShardingInfo(jobName));
  }

  // ---------------------------------------------------------------- operations

  /** Fires the job now on every online instance; resolves with their ids. */
  async trigger(jobName: string, options: { jobParameter?: string } = {}): Promise<string[]> {
    return this.run('trigger', (apis) => apis.jobOperate.trigger(jobName, options.jobParameter));
  }

  /** Disables a job on every server, a server in every job, or one job on one server. */
  async disable(target: OperationTarget): Promise<OperatedNode[]> {
    return this.run('disable', (apis) => apis.jobOperate.disable(target));
  }

  async enable(target: OperationTarget): Promise<OperatedNode[]> {
    return this.run('enable', (apis) => apis.jobOperate.enable(target));
  }

  /** Stops the job on the target's instances (their processes go on); peers take the items over. */
  async shutdown(target: OperationTarget): Promise<OperatedNode[]> {
    return this.run('shutdown', (apis) => apis.jobOperate.shutdown(target));
  }

  /** Shutdown, and the target's server nodes deleted. */
  async remove(target: OperationTarget): Promise<OperatedNode[]> {
    return this.run('remove', (apis) => apis.jobOperate.remove(target));
  }

  /** Keeps one item from running anywhere until enabled again. */
  async disableItem(jobName: string, item: number): Promise<void> {
    return this.run('disable', (apis) => apis.shardingOperate.disable(jobName, item));
  }

  async enableItem(jobName: string, item: number): Promise<void> {
    return this.run('enable', (apis) => apis.shardingOperate.enable(jobName, item));
  }

  // ---------------------------------------------------------------- configuration

  async getJobConfiguration(jobName: string): Promise<JobConfiguration | undefined> {
    return this.run('get', (apis) => apis.jobConfiguration.get(jobName));
  }

  /** Validated as `@ShardedJob()` options are, then written; running instances reschedule or reshard at once. */
  async updateJobConfiguration(jobName: string, changes: JobConfigurationChanges): Promise<JobConfiguration> {
    return this.run('update', (apis) => apis.jobConfiguration.update(jobName, changes));
  }

  /** Deletes the job's whole tree. */
  async removeJob(jobName: string): Promise<void> {
    return this.run('remove', (apis) => apis.jobConfiguration.remove(jobName));
  }

  /**
   * Tells `listener` which jobs' nodes change, as they change (one ZooKeeper watch over the namespace, changes
   * gathered for 200 ms), `resync` after a reconnection (changes meanwhile were missed) and the connection's state.
   * What ElasticJob's console would poll for. Stop it with the result's close().
   */
  async watch(listener: (change: NamespaceChange) => void): Promise<{ close(): void }> {
    const { registry } = await this.api();
    return NamespaceWatch.start(registry, listener, (message) => new Logger('ElasticJob:operator').warn(message));
  }

  /** One call, bounded: it rejects with CONNECTION_LOSS when ZooKeeper does not answer within the timeout. */
  private async run<T>(what: string, call: (apis: Apis) => Promise<T>): Promise<T> {
    return withinBound(call(await this.api()), this.connectionTimeoutMs, what);
  }

  /**
   * The APIs over the current session (asked of the source on every call: an app's session ends with the app),
   * once connected: a call waits up to the connection timeout, then rejects (CONNECTION_LOSS).
   */
  private async api(): Promise<Apis> {
    if (this.closed) throw new RegistryError('CLOSED', undefined, 'this ElasticJobOperator was closed');
    const registry = await this.registry();
    if (this.apis?.registry !== registry) {
      this.apis = {
        registry,
        jobStatistics: new JobStatisticsApi(registry),
        serverStatistics: new ServerStatisticsApi(registry),
        shardingStatistics: new ShardingStatisticsApi(registry),
        jobOperate: new JobOperateApi(registry),
        shardingOperate: new ShardingOperateApi(registry),
        jobConfiguration: new JobConfigurationApi(registry),
      };
    }
    await awaitConnection(registry, this.connectionTimeoutMs, 'ElasticJobOperator');
    return this.apis;
  }
}
