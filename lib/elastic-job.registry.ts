import { Injectable, Logger } from '@nestjs/common';
import {
  ElasticJobError,
  InvalidOperationError,
  JobNotFoundError,
  RegistryError,
  withinBound,
} from './errors/elastic-job.errors.js';
import type { ShardingContext } from './interfaces/sharding-context.interface.js';
import { parseShardingItemParameters } from './job/config/sharding-item-parameters.js';
import { buildTaskId } from './job/paths.js';
import { checkedProgress, ItemLogger } from './job/policies/item-lines.js';
import { awaitConnection } from './registry/registry-center.js';

/** What `runJob()` may set of the ShardingContext; the rest comes from the job's configuration. */
export interface RunJobOptions {
  /** Default 0. */
  shardingItem?: number;
  /** Default: the job's `jobParameter`. */
  jobParameter?: string;
  /** Default: the item's parameter in `shardingItemParameters`. */
  shardingParameter?: string;
  /** Default: a signal that never aborts. */
  signal?: AbortSignal;
}
import { ElasticJobOrchestrator } from './elastic-job.orchestrator.js';
import { ElasticJobExplorer } from './elastic-job.explorer.js';
import type { ShardedJobOptions } from './interfaces/sharded-job-options.interface.js';
import type { JobStatus } from './job/scheduler/job-scheduler.js';
import type { Observable } from 'rxjs';
import { ElasticJobEventBus } from './events/elastic-job-event-bus.js';
import { buildInstanceId } from './job/paths.js';
import type { ElasticJobEvent } from './events/elastic-job-event.types.js';
import type {
  ExecutionHistoryQuery,
  ExecutionLinesKeeper,
  ExecutionRecord,
} from './interfaces/execution-history.interface.js';
import type { ItemInterceptor } from './interfaces/item-interceptor.interface.js';
import type { TypedJobOptions } from './interfaces/module-options.interface.js';

/** Runtime view of this instance's sharded jobs; inject it anywhere. @publicApi */
@Injectable()
export class ElasticJobRegistry {
  /** @internal Nest injects it. */
  constructor(
    private readonly orchestrator: ElasticJobOrchestrator,
    private readonly eventBus: ElasticJobEventBus,
    private readonly explorer: ElasticJobExplorer,
  ) {}

  /**
   * This instance's recent item executions from its in-memory log (the module's `executionLog` option), newest first:
   * what ran here, with each failure's stack, without a database. The console gathers every instance's
   * (docs/guide/console.md, "Execution history without a database"). Empty when the log is off.
   */
  recentExecutions(query: ExecutionHistoryQuery): ExecutionRecord[] {
    return this.orchestrator.executionLog?.query(query) ?? [];
  }

  /** This instance's id, `{ip}@-@{pid}`, as it appears under every job's `instances/` node. */
  get instanceId(): string {
    const { ip, pid } = this.orchestrator.instanceIdentity();
    return buildInstanceId(ip, pid);
  }

  /**
   * Every event of this app's jobs on this instance, as it happens (docs/guide/events-and-listeners.md, "Events"):
   * items started and completed, firing status, leadership, sharding, session, failover, misfire. Filter with rxjs
   * (`filter(e => e.type === 'item.completed')`). Completes when the app shuts down.
   */
  get events$(): Observable<ElasticJobEvent> {
    return this.eventBus.events$;
  }

  /**
   * Files every item's kept lines (`context.logger`, docs/guide/item-policies.md, "Item logs") with `keeper` too, as
   * the items log them: how a tracing database's provider writes them beside its executions. Register in
   * `onModuleInit`, before jobs start. Returns the call that removes it.
   */
  keepItemLines(keeper: ExecutionLinesKeeper): () => void {
    this.orchestrator.lineKeepers.push(keeper);
    return () => {
      const index = this.orchestrator.lineKeepers.indexOf(keeper);
      if (index >= 0) this.orchestrator.lineKeepers.splice(index, 1);
    };
  }

  /**
   * Runs every item of every job on this instance through `interceptor` (docs/guide/jobs-and-sharding.md, "Item
   * interceptors"); the first registered is the outermost. Register in `onModuleInit`, before jobs start; `runJob()`
   * does not use them. Returns the call that removes it.
   */
  useItemInterceptor(interceptor: ItemInterceptor): () => void {
    this.orchestrator.itemInterceptors.push(interceptor);
    return () => {
      const index = this.orchestrator.itemInterceptors.indexOf(interceptor);
      if (index >= 0) this.orchestrator.itemInterceptors.splice(index, 1);
    };
  }

  /**
   * Adds a job at run time (for jobs defined in a database, as `@nestjs/schedule`'s `SchedulerRegistry.addCronJob`):
   * validated as a `@ShardedJob()` one, then registered in ZooKeeper, sharded with the instances that run it too.
   * Every instance that should run it adds it (with the same options; its identity is `jobClass`, or
   * `addJob(jobName)`). Rejects with a JobConfigurationError (a bad option, or a name this app already has), a
   * JobConflictError, or a RegistryError when ZooKeeper does not answer within the connection timeout.
   */
  async addJob(options: ShardedJobOptions, handler: (context: ShardingContext) => unknown): Promise<void>;
  /**
   * Adds a typed job at run time: HTTP or SCRIPT, defined by its `props` with no handler
   * (docs/guide/http-and-script-jobs.md). A SCRIPT job whose command the module's `scriptJobs` does not allow is a
   * JobConfigurationError naming `scriptJobs`.
   */
  async addJob(options: TypedJobOptions): Promise<void>;
  async addJob(
    options: ShardedJobOptions | TypedJobOptions,
    handler?: (context: ShardingContext) => unknown,
  ): Promise<void> {
    if (!this.orchestrator.enabled)
      throw new ElasticJobError(
        `Job '${String(options?.jobName)}': ElasticJobModule has enabled: false, so no job is scheduled here`,
      );
    const definition =
      handler === undefined && 'type' in (options ?? {})
        ? this.explorer.typedDefinition(options as TypedJobOptions)
        : this.explorer.runtimeDefinition(options as ShardedJobOptions, handler!);
    await this.orchestrator.addJob(definition);
  }

  /**
   * Removes a job from this instance, added at run time or declared: it stops here as at an app shutdown (running
   * items drain; its markers, leadership and instance node go) and peers reshard without it. Its configuration stays
   * in ZooKeeper (ElasticJobOperator.removeJob removes a job from the whole cluster). JobNotFoundError if unknown.
   */
  async removeJob(jobName: string): Promise<void> {
    this.scheduler(jobName);
    await this.orchestrator.removeJob(jobName);
  }

  /** False when the module was configured with `enabled: false` (nothing is scheduled, no ZooKeeper session). */
  get enabled(): boolean {
    return this.orchestrator.enabled;
  }

  /** The app's jobs: scheduled ones, or, with `enabled: false`, the declared ones. Empty before bootstrap. */
  getJobNames(): string[] {
    if (!this.orchestrator.enabled) return this.orchestrator.definitions.map((definition) => definition.config.jobName);
    return [...this.orchestrator.jobs.keys()];
  }

  /**
   * Runs one item of a job's handler here and now, as a firing would (the whole ShardingContext built from the
   * job's configuration), without ZooKeeper: for tests, and with `enabled: false`. Resolves with what the handler
   * returns, rejects with what it throws (no error handler in between); an unknown job rejects with
   * JobNotFoundError, an item outside 0..shardingTotalCount-1 with InvalidOperationError.
   */
  async runJob(jobName: string, options: RunJobOptions = {}): Promise<unknown> {
    const definition = this.orchestrator.definitions.find((candidate) => candidate.config.jobName === jobName);
    if (!definition) {
      const known = this.orchestrator.definitions.map((candidate) => candidate.config.jobName);
      throw new JobNotFoundError(jobName, known, 'app');
    }
    const { config } = definition;
    const shardingItem = options.shardingItem ?? 0;
    if (!Number.isInteger(shardingItem) || shardingItem < 0 || shardingItem >= config.shardingTotalCount) {
      throw new InvalidOperationError(
        'runJob',
        'shardingItem',
        `must be an integer in 0..${config.shardingTotalCount - 1} (shardingTotalCount ${config.shardingTotalCount}), ` +
          `got ${JSON.stringify(options.shardingItem)}`,
      );
    }
    const parameters = parseShardingItemParameters(config.shardingItemParameters);
    const context: ShardingContext = {
      jobName,
      taskId: buildTaskId(jobName, [shardingItem], 'runJob'),
      shardingTotalCount: config.shardingTotalCount,
      jobParameter: options.jobParameter ?? config.jobParameter,
      shardingItem,
      shardingParameter:
        options.shardingParameter ?? (typeof parameters === 'string' ? undefined : parameters.get(shardingItem)),
      signal: options.signal ?? new AbortController().signal,
      attempt: 1,
      // Outside a firing: the lines go to the app's logger only, the progress is checked and dropped.
      logger: new ItemLogger(new Logger(`ElasticJob:${jobName}`), shardingItem),
      reportProgress: (value) => void checkedProgress(value),
    };
    return definition.handler(context);
  }

  /** Registration, leadership, assigned and running items of a job on this instance; JobNotFoundError if none. */
  getJobStatus(jobName: string): JobStatus {
    return this.scheduler(jobName).status();
  }

  /**
   * Fires the job now on every live instance of the cluster (ElasticJob's trigger: one `trigger/{instanceId}` node
   * each). An instance whose firing is running runs once more after it. `jobParameter` replaces the job's for that
   * run (our instances read it from the trigger node; Java instances run with their own). Resolves with the number of instances;
   * rejects with a JobNotFoundError for a name this app has no job of, and with a RegistryError
   * (`CONNECTION_LOSS`) when ZooKeeper does not answer within the connection timeout.
   */
  async trigger(jobName: string, options: { jobParameter?: string } = {}): Promise<number> {
    const scheduler = this.scheduler(jobName);
    const registry = this.orchestrator.registryCenter;
    if (!registry)
      throw new RegistryError(
        'CONNECTION_LOSS',
        undefined,
        `Job '${jobName}': cannot trigger, no ZooKeeper session yet`,
      );
    const timeoutMs = registry.settings.connectionTimeoutMilliseconds;
    await awaitConnection(registry, timeoutMs, `Job '${jobName}': cannot trigger`);
    if (options.jobParameter !== undefined && typeof options.jobParameter !== 'string')
      throw new InvalidOperationError(
        'trigger',
        'jobParameter',
        `must be a string, got ${JSON.stringify(options.jobParameter)}`,
      );
    return withinBound(scheduler.triggerAllInstances(options.jobParameter), timeoutMs, `Job '${jobName}': trigger`);
  }

  /** A job of this app; a JobNotFoundError otherwise (none before bootstrap). */
  private scheduler(jobName: string) {
    if (!this.orchestrator.enabled)
      throw new ElasticJobError(
        `Job '${jobName}': ElasticJobModule has enabled: false, so no job is scheduled here (runJob() runs a handler)`,
      );
    const scheduler = this.orchestrator.jobs.get(jobName);
    if (!scheduler) throw new JobNotFoundError(jobName, this.getJobNames(), 'app');
    return scheduler;
  }

  /** ZooKeeper requests this process has sent (reads, writes, addWatch) and watch events received, since start. */
  getZookeeperStats(): { reads: number; writes: number; watchRequests: number; watchEvents: number } {
    return {
      ...(this.orchestrator.registryCenter?.stats ?? { reads: 0, writes: 0, watchRequests: 0, watchEvents: 0 }),
    };
  }

  /** Whether the ZooKeeper session is connected right now. */
  isConnected(): boolean {
    return this.orchestrator.registryCenter?.isConnected() ?? false;
  }
}
