import { Logger } from '@nestjs/common';
import { NamespaceWatch, type NamespaceChange } from './namespace-watch.js';
import { InvalidOperationError, quoteInput, RegistryError, withinBound } from '../errors/elastic-job.errors.js';
import type { ZookeeperConfiguration } from '../interfaces/module-options.interface.js';
import type { JobConfiguration } from '../job/config/job-configuration.js';
import { awaitConnection, type RegistryCenter } from '../registry/registry-center.js';
import { ZookeeperRegistryCenter } from '../registry/zookeeper-registry-center.js';
import { DEFAULT_ZOOKEEPER_SETTINGS, validateZookeeperOptions } from '../registry/zookeeper-settings.js';
import { checkConfigurationChanges, type JobConfigurationChanges } from './job-configuration.api.js';
import type { ClusterExecutions } from './cluster-executions.api.js';
import type { ExecutionLinesAnswer } from './item-state.api.js';
import type { OperatedNode } from './job-operate.api.js';
import { lifecycleApis, type Apis } from './lifecycle-apis.js';
import type { ExecutionHistoryQuery } from '../interfaces/execution-history.interface.js';
import {
  checkExecutionQuery,
  checkItemNumber,
  checkJobName,
  checkJobParameter,
  checkKeys,
  checkServerIp,
  checkTarget,
} from './operator-input.js';
import type { JobBriefInfo, JobServerInfo, OperationTarget, ServerBriefInfo, ShardingInfo } from './lifecycle.types.js';
import { checkRerunItems, checkRunsLimit, checkTimeout, checkWorkflowNode } from './operator-input.js';
import type { WorkflowRun } from '../workflow/workflow-run.js';
import type { WorkflowOptions } from '../interfaces/workflow-options.interface.js';

/**
 * Operates a namespace's jobs, running or not, from any Node program or Nest app: ElasticJob's lifecycle API
 * (docs/reference/elasticjob.md §6) in one object, writing the same znodes, so that ElasticJob's Java tools and
 * this one steer the same clusters. Every read goes to ZooKeeper (no cache).
 *
 * - In a Nest app that imports ElasticJobModule: inject it; it shares the app's session (and opens one for an
 *   app without jobs).
 * - Anywhere else: `await ElasticJobOperator.connect({ serverLists, namespace })`, then `close()`.
 *
 * Every argument is checked before anything is read (names as ZooKeeper node names of a bounded length, server IPs
 * as IP addresses, items as integers; docs/operations/errors.md, "Errors of the operator's surfaces"): a bad one
 * rejects with an InvalidOperationError naming the call and the argument. Lookups of one job (getJobBriefInfo,
 * getJobServersInfo, getJobConfiguration) resolve undefined when it does not exist; every other call on a job that does
 * not exist rejects with a JobNotFoundError, on a server with no node where it is named with a ServerNotFoundError, and
 * ZooKeeper trouble with a RegistryError. Nothing is written for what does not exist. @publicApi
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

  // Every argument is checked (operator-input.ts) before the call waits for a connection or reads anything.

  // ---------------------------------------------------------------- statistics

  /** Every job of the namespace, by name (ElasticJob's getAllJobsBriefInfo). */
  async getAllJobsBriefInfo(): Promise<JobBriefInfo[]> {
    return this.run('getAllJobsBriefInfo', (apis) => apis.jobStatistics.getAllJobsBriefInfo());
  }

  /** One job; undefined when there is no such job. */
  async getJobBriefInfo(jobName: string): Promise<JobBriefInfo | undefined> {
    checkJobName(jobName, 'getJobBriefInfo');
    return this.run('getJobBriefInfo', (apis) => apis.jobStatistics.getJobBriefInfo(jobName));
  }

  /** The jobs one server takes part in, with its status and instances there (none for a server no job knows). */
  async getJobsBriefInfo(serverIp: string): Promise<JobBriefInfo[]> {
    checkServerIp(serverIp, 'getJobsBriefInfo');
    return this.run('getJobsBriefInfo', (apis) => apis.jobStatistics.getJobsBriefInfo(serverIp));
  }

  async getAllServersBriefInfo(): Promise<ServerBriefInfo[]> {
    return this.run('getAllServersBriefInfo', (apis) => apis.serverStatistics.getAllServersBriefInfo());
  }

  /** One job's servers with their status in it and instances online: undefined when there is no such job. */
  async getJobServersInfo(jobName: string): Promise<JobServerInfo[] | undefined> {
    checkJobName(jobName, 'getJobServersInfo');
    return this.run('getJobServersInfo', (apis) => apis.serverStatistics.getJobServersInfo(jobName));
  }

  /** The job's items (empty before its first sharding); a JobNotFoundError when there is no such job. */
  async getShardingInfo(
    jobName: string,
    /**
     * `progress`: also the latest progress of the running items, asked of the instances running them (they answer
     * within `timeoutMs`, default 2000; Java instances never do): docs/guide/item-policies.md, "Progress".
     */
    options: { progress?: boolean; timeoutMs?: number } = {},
  ): Promise<ShardingInfo[]> {
    checkJobName(jobName, 'getShardingInfo');
    const timeoutMs = checkTimeout(options.timeoutMs ?? 2000, 'getShardingInfo');
    const items = await this.run('getShardingInfo', (apis) => apis.shardingStatistics.getShardingInfo(jobName));
    if (options.progress !== true) return items;
    const running = [
      ...new Set(items.filter((item) => item.status === 'RUNNING' && item.instanceId).map((item) => item.instanceId!)),
    ];
    const { itemState } = await this.api();
    const progress = await withinBound(
      itemState.progress(jobName, running, timeoutMs),
      this.connectionTimeoutMs + timeoutMs,
      'getShardingInfo',
    );
    return items.map((item) => {
      const found = progress.get(item.item);
      return found && item.status === 'RUNNING' && found.instanceId === item.instanceId
        ? { ...item, progress: { value: found.value, at: found.at } }
        : item;
    });
  }

  /**
   * One execution's lines, as its item logged them through `context.logger` (kept bounded by the instance that ran
   * it, in its in-memory execution log): asked of `instance` when given (an execution record's `instanceId`), else of
   * the job's online instances, within `timeoutMs` (default 3000). docs/guide/item-policies.md, "Item logs".
   */
  async getExecutionLines(
    jobName: string,
    executionId: string,
    options: { instance?: string; timeoutMs?: number } = {},
  ): Promise<ExecutionLinesAnswer> {
    checkJobName(jobName, 'getExecutionLines');
    if (typeof executionId !== 'string' || !/^[A-Za-z0-9-]{1,100}$/.test(executionId))
      throw new InvalidOperationError(
        'getExecutionLines',
        'executionId',
        `must be an execution's id (letters, digits and dashes), got ${quoteInput(executionId)}`,
      );
    if (options.instance !== undefined && (typeof options.instance !== 'string' || options.instance === ''))
      throw new InvalidOperationError(
        'getExecutionLines',
        'instance',
        `must be an instance id, got ${quoteInput(options.instance)}`,
      );
    const timeoutMs = checkTimeout(options.timeoutMs ?? 3000, 'getExecutionLines');
    const { itemState } = await this.api();
    return withinBound(
      itemState.lines(jobName, executionId, options.instance === undefined ? undefined : [options.instance], timeoutMs),
      this.connectionTimeoutMs + timeoutMs,
      'getExecutionLines',
    );
  }

  // ---------------------------------------------------------------- operations

  /**
   * Fires the job now on every online instance; resolves with their ids. `jobParameter` (at most 64 KiB) is that
   * run's job parameter on this library's instances.
   */
  async trigger(jobName: string, options: { jobParameter?: string } = {}): Promise<string[]> {
    checkJobName(jobName, 'trigger');
    if (typeof options !== 'object' || options === null)
      throw new InvalidOperationError('trigger', 'options', `must be { jobParameter? }, got ${quoteInput(options)}`);
    checkKeys(options, ['jobParameter'], 'trigger');
    const jobParameter = checkJobParameter(options.jobParameter, 'trigger');
    return this.run('trigger', (apis) => apis.jobOperate.trigger(jobName, jobParameter));
  }

  /**
   * Disables a job on every server, a server in every job, or one job on one server. A server must have a node where
   * it is named (ServerNotFoundError otherwise): one that has not registered cannot be disabled ahead.
   */
  async disable(target: OperationTarget): Promise<OperatedNode[]> {
    checkTarget(target, 'disable');
    return this.run('disable', (apis) => apis.jobOperate.disable(target));
  }

  async enable(target: OperationTarget): Promise<OperatedNode[]> {
    checkTarget(target, 'enable');
    return this.run('enable', (apis) => apis.jobOperate.enable(target));
  }

  /** Stops the job on the target's instances (their processes go on); peers take the items over. */
  async shutdown(target: OperationTarget): Promise<OperatedNode[]> {
    checkTarget(target, 'shutdown');
    return this.run('shutdown', (apis) => apis.jobOperate.shutdown(target));
  }

  /** Shutdown, and the target's server nodes deleted. */
  async remove(target: OperationTarget): Promise<OperatedNode[]> {
    checkTarget(target, 'remove');
    return this.run('remove', (apis) => apis.jobOperate.remove(target));
  }

  /** Keeps one item (0..shardingTotalCount-1) from running anywhere until enabled again. */
  async disableItem(jobName: string, item: number): Promise<void> {
    checkJobName(jobName, 'disableItem');
    checkItemNumber(item, 'disableItem');
    return this.run('disableItem', (apis) => apis.shardingOperate.disable(jobName, item));
  }

  /** An item of the job runs again; also removes a flag left beyond a shardingTotalCount that shrank. */
  async enableItem(jobName: string, item: number): Promise<void> {
    checkJobName(jobName, 'enableItem');
    checkItemNumber(item, 'enableItem');
    return this.run('enableItem', (apis) => apis.shardingOperate.enable(jobName, item));
  }

  /**
   * Runs one item again now on its current owner, whatever it did last (a failed item, once fixed): this library's
   * `rerun/{instanceId}` node (docs/operations/operator-api.md, "Running items again"). Refused for a disabled item
   * or one with no live owner. Resolves with the instance asked.
   */
  async rerunItem(jobName: string, item: number): Promise<{ jobName: string; item: number; instanceId: string }> {
    checkJobName(jobName, 'rerunItem');
    checkItemNumber(item, 'rerunItem');
    return this.run('rerunItem', (apis) => apis.shardingOperate.rerun(jobName, item));
  }

  /**
   * The cluster's recent item executions without a database: every online instance's in-memory log (the module's
   * `executionLog` option), asked through ZooKeeper and merged newest first (docs/guide/console.md, "Execution
   * history without a database"). Instances that do not answer within `timeoutMs` (default 3000; Java instances
   * never do) are listed in `missing`. Rejects with JobNotFoundError for an unknown `jobName`.
   */
  async getExecutions(query: ExecutionHistoryQuery, options: { timeoutMs?: number } = {}): Promise<ClusterExecutions> {
    const checked = checkExecutionQuery(query, 'getExecutions');
    const timeoutMs = options.timeoutMs ?? 3000;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > 60_000)
      throw new InvalidOperationError(
        'getExecutions',
        'timeoutMs',
        `must be an integer 0..60000, got ${quoteInput(timeoutMs)}`,
      );
    const { clusterExecutions } = await this.api();
    return withinBound(
      clusterExecutions.query(checked, timeoutMs),
      this.connectionTimeoutMs + timeoutMs,
      'getExecutions',
    );
  }

  // ---------------------------------------------------------------- configuration

  /** The job's configuration; undefined when there is no such job. */
  async getJobConfiguration(jobName: string): Promise<JobConfiguration | undefined> {
    checkJobName(jobName, 'getJobConfiguration');
    return this.run('getJobConfiguration', (apis) => apis.jobConfiguration.get(jobName));
  }

  /** Validated as `@ShardedJob()` options are, then written; running instances reschedule or reshard at once. */
  async updateJobConfiguration(jobName: string, changes: JobConfigurationChanges): Promise<JobConfiguration> {
    checkConfigurationChanges(jobName, changes);
    return this.run('updateJobConfiguration', (apis) => apis.jobConfiguration.update(jobName, changes));
  }

  /** Deletes the job's whole tree. */
  async removeJob(jobName: string): Promise<void> {
    checkJobName(jobName, 'removeJob');
    return this.run('removeJob', (apis) => apis.jobConfiguration.remove(jobName));
  }

  /**
   * Tells `listener` which jobs' nodes change, as they change (one ZooKeeper watch over the namespace, changes
   * gathered for 200 ms), `resync` after a reconnection (changes meanwhile were missed) and the connection's state.
   * What ElasticJob's console would poll for. With `{ workflows: true }`, also which workflows' runs change
   * (`{ kind: 'workflows', workflows }`). Stop it with the result's close().
   */
  async watch(
    listener: (change: NamespaceChange) => void,
    options: { workflows?: boolean } = {},
  ): Promise<{ close(): void }> {
    const { registry } = await this.api();
    return NamespaceWatch.start(
      registry,
      listener,
      (message) => new Logger('ElasticJob:operator').warn(message),
      options,
    );
  }

  // ---------------------------------------------------------------- workflows (docs/guide/workflows.md)

  /**
   * Starts a run of the workflow now; resolves with its id. Refused (InvalidOperationError) while a run of it is under
   * way, or when no instance declaring it has started in this namespace. Its coordinator starts the first steps.
   */
  async triggerWorkflow(name: string): Promise<string> {
    checkWorkflowNode(name, 'triggerWorkflow', 'name');
    return this.run('triggerWorkflow', (apis) => apis.workflows.trigger(name));
  }

  /**
   * The workflows of the namespace, by name: each one's definition (cron, steps and the steps they wait for) as the
   * instances declaring it stored it when they started. What the console lists.
   */
  async getWorkflows(): Promise<WorkflowOptions[]> {
    return this.run('getWorkflows', (apis) => apis.workflows.list());
  }

  /**
   * The workflow's runs kept in ZooKeeper (its `keepRuns`), newest first: each one's state and each step's. `limit`
   * (1..1000): only the newest ones, and only they are read.
   */
  async getWorkflowRuns(name: string, options: { limit?: number } = {}): Promise<WorkflowRun[]> {
    checkWorkflowNode(name, 'getWorkflowRuns', 'name');
    const limit = checkRunsLimit(options, 'getWorkflowRuns');
    return this.run('getWorkflowRuns', (apis) => apis.workflows.runs(name, limit));
  }

  /**
   * Runs a FAILED step of a run again: its failed items (`items: 'failed'`, the default) or all of them; the run
   * goes on from there (a FAILED run is RUNNING again). Resolves with the run as written.
   */
  async rerunWorkflowStep(
    name: string,
    runId: string,
    job: string,
    options: { items?: 'failed' | 'all' } = {},
  ): Promise<WorkflowRun> {
    checkWorkflowNode(name, 'rerunWorkflowStep', 'name');
    checkWorkflowNode(runId, 'rerunWorkflowStep', 'runId');
    checkJobName(job, 'rerunWorkflowStep', 'job');
    const items = checkRerunItems(options, 'rerunWorkflowStep');
    return this.run('rerunWorkflowStep', (apis) => apis.workflows.rerun(name, runId, job, items));
  }

  /** Cancels a run under way (or FAILED): nothing more starts in it; items running finish. */
  async cancelWorkflowRun(name: string, runId: string): Promise<WorkflowRun> {
    checkWorkflowNode(name, 'cancelWorkflowRun', 'name');
    checkWorkflowNode(runId, 'cancelWorkflowRun', 'runId');
    return this.run('cancelWorkflowRun', (apis) => apis.workflows.cancel(name, runId));
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
    if (this.apis?.registry !== registry) this.apis = lifecycleApis(registry);
    await awaitConnection(registry, this.connectionTimeoutMs, 'ElasticJobOperator');
    return this.apis;
  }
}
