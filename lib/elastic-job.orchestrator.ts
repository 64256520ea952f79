import { mapBounded, mapBoundedWhile } from './registry/request-limits.js';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleDestroy,
} from '@nestjs/common';
import { ElasticJobExplorer } from './elastic-job.explorer.js';
import { ElasticJobEventBus } from './events/elastic-job-event-bus.js';
import { DEFAULT_EXECUTION_LOG_SIZE, ExecutionLog, MAX_EXECUTION_LOG_SIZE } from './tracing/execution-log.js';
import { listenerHooks } from './listeners/job-listener-hooks.js';
import type { ItemInterceptor } from './interfaces/item-interceptor.interface.js';
import type { ExecutionLinesKeeper } from './interfaces/execution-history.interface.js';
import { ELASTIC_JOB_MODULE_OPTIONS } from './elastic-job.module-definition.js';
import {
  describeError,
  isConnectionTrouble,
  JobConfigurationError,
  JobConflictError,
  JobNotFoundError,
  RegistryError,
} from './errors/elastic-job.errors.js';
import type { ElasticJobModuleOptions, ZookeeperConfiguration } from './interfaces/module-options.interface.js';
import { JobScheduler, type JobDefinition } from './job/scheduler/job-scheduler.js';
import type { RegistryCenter } from './registry/registry-center.js';
import { ZookeeperRegistryCenter } from './registry/zookeeper-registry-center.js';
import { validateZookeeperOptions } from './registry/zookeeper-settings.js';
import { deferred } from './util/deferred.js';
import { detectLocalIp, IPV4_PATTERN } from './util/local-ip.js';
import { validateWorkflowOptions, validateWorkflowSteps } from './workflow/workflow-validation.js';

/** How long shutdown waits for running items, unless `shutdownTimeoutMilliseconds` says otherwise. */
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;

/**
 * Jobs registering at once while connected. Each registration is a dozen requests in sequence; all of them at once
 * kept every job's requests, promises and answers alive together. Measured at 10,000 jobs (10-second cron, one run
 * each): RSS at start-up 1145 MB unbounded, 900 MB with 256, all sharded in 27 and 30 to 32 s. Other bounds were
 * not compared.
 */
const REGISTRATION_CONCURRENCY = 256;

/** How long after bootstrap the shutdown hooks are looked for (see warnWithoutShutdownHooks). */
const SHUTDOWN_HOOKS_CHECK_MS = 1_000;

/** Validates the module options; throws JobConfigurationError naming the field. */
export function validateModuleOptions(options: ElasticJobModuleOptions): void {
  function fail(field: string, detail: string): never {
    throw new JobConfigurationError(undefined, field, detail);
  }
  if (!options || typeof options !== 'object') fail('options', 'ElasticJobModule.forRoot() needs an options object');
  // Not enabled, the module needs no ZooKeeper settings; given anyway, they are checked all the same.
  if (options.enabled !== false || options.zookeeper !== undefined)
    validateZookeeperOptions(options.zookeeper as ZookeeperConfiguration);
  if (options.instance?.ip !== undefined && !IPV4_PATTERN.test(options.instance.ip))
    fail('instance.ip', `must be an IPv4 address, got ${JSON.stringify(options.instance.ip)}`);
  const timeout = options.shutdownTimeoutMilliseconds;
  if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 0))
    fail('shutdownTimeoutMilliseconds', `must be an integer >= 0, got ${JSON.stringify(timeout)}`);
  if (options.enabled !== undefined && typeof options.enabled !== 'boolean')
    fail('enabled', `must be true or false, got ${JSON.stringify(options.enabled)}`);
  const log = options.executionLog;
  if (log !== undefined && log !== false) {
    if (typeof log !== 'object' || log === null)
      fail('executionLog', `must be { size } or false, got ${JSON.stringify(log)}`);
    const size = log.size;
    if (size !== undefined && (!Number.isInteger(size) || size < 1 || size > MAX_EXECUTION_LOG_SIZE))
      fail('executionLog.size', `must be an integer 1..${MAX_EXECUTION_LOG_SIZE}, got ${JSON.stringify(size)}`);
  }
  validateWorkflowOptions(options.workflows);
}

/**
 * Starts and stops every job of the app. Bootstrap: one ZooKeeper session, conflict checks for all jobs (reads
 * only), then the jobs register, REGISTRATION_CONCURRENCY at a time. Shutdown: jobs drain and deregister in `onModuleDestroy`; the
 * session closes in `onApplicationShutdown`.
 */
@Injectable()
export class ElasticJobOrchestrator implements OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown {
  private readonly logger = new Logger('ElasticJob');
  private registry: ZookeeperRegistryCenter | undefined;
  private readonly schedulers = new Map<string, JobScheduler>();
  /** The operator's own session, in an app without jobs. */
  private operatorSession: Promise<ZookeeperRegistryCenter> | undefined;
  /** Settles when the shutdown hooks have been looked for: true when they were missing (and it was said). */
  readonly shutdownHooksCheck = deferred<boolean>();
  /** The jobs' session, once bootstrap has made it. */
  private readonly jobsSession = deferred<RegistryCenter>();
  private shutDown = false;
  private identity: { ip: string; pid: number } | undefined;
  /** The jobs' session's start (its first connection, or the connection timeout). */
  private sessionStart: Promise<boolean> | undefined;
  /** Names of jobs being added at run time (addJob), so that two adds of one name cannot both proceed. */
  private readonly adding = new Set<string>();
  /** ElasticJobRegistry.useItemInterceptor(): every job's items run through them, outermost first. */
  readonly itemInterceptors: ItemInterceptor[] = [];
  /** This process's recent item executions (the `executionLog` option); undefined when off. */
  readonly executionLog: ExecutionLog | undefined;
  /** ElasticJobRegistry.keepItemLines(): what else files items' kept lines (a tracing database's provider). */
  readonly lineKeepers: ExecutionLinesKeeper[] = [];

  constructor(
    @Inject(ELASTIC_JOB_MODULE_OPTIONS) private readonly options: ElasticJobModuleOptions,
    private readonly explorer: ElasticJobExplorer,
    private readonly eventBus: ElasticJobEventBus,
  ) {
    const logOption = options?.executionLog;
    if (logOption !== false) {
      const log = new ExecutionLog(logOption?.size ?? DEFAULT_EXECUTION_LOG_SIZE);
      this.executionLog = log;
      eventBus.on('the execution log', (event) => log.record(event), { types: ['item.started', 'item.completed'] });
    }
  }

  get jobs(): ReadonlyMap<string, JobScheduler> {
    return this.schedulers;
  }

  /** The app's `@ShardedJob()` methods, validated (also when the module is not enabled). */
  get definitions(): readonly JobDefinition[] {
    return this.explorer.jobs;
  }

  get enabled(): boolean {
    return this.options.enabled !== false;
  }

  /** The ZooKeeper settings, which validation guarantees when the module is enabled (the only time it connects). */
  private get zookeeper(): ZookeeperConfiguration {
    if (!this.options.zookeeper) throw new JobConfigurationError(undefined, 'zookeeper', 'is required');
    return this.options.zookeeper;
  }

  get registryCenter(): ZookeeperRegistryCenter | undefined {
    return this.registry;
  }

  /**
   * The session the injected ElasticJobOperator uses: the jobs' session; in an app without jobs, one opened on the
   * operator's first call (and closed with the app). Rejects with a RegistryError when ZooKeeper does not answer
   * within the connection timeout.
   */
  async operatorRegistry(): Promise<RegistryCenter> {
    if (this.shutDown) throw new RegistryError('CLOSED', undefined, 'the application has shut down');
    if (this.registry) return this.registry;
    validateModuleOptions(this.options);
    if (!this.enabled)
      throw new RegistryError(
        'CLOSED',
        undefined,
        'ElasticJobModule has enabled: false: it opens no ZooKeeper session',
      );
    // An app with jobs: their session, once bootstrap has made it (a call from onModuleInit waits for it).
    if (this.explorer.jobs.length > 0) return this.jobsSession.promise;
    this.operatorSession ??= ZookeeperRegistryCenter.open(this.zookeeper);
    this.operatorSession.catch(() => (this.operatorSession = undefined));
    return this.operatorSession;
  }

  async onApplicationBootstrap(): Promise<void> {
    validateModuleOptions(this.options);
    const definitions = this.explorer.jobs;
    // Steps against the app's jobs, before anything is written (docs/guide/workflows.md).
    validateWorkflowSteps(
      validateWorkflowOptions(this.options.workflows),
      new Map(definitions.map(({ config }) => [config.jobName, { oneOff: config.cron === '' }])),
    );
    for (const subscriber of this.explorer.eventSubscribers)
      this.eventBus.on(subscriber.name, subscriber.call, { types: subscriber.types, jobs: subscriber.jobs });
    if (this.options.enabled === false) {
      this.logger.log(
        `enabled: false: ${definitions.length} job(s) validated, none scheduled; not connecting to ZooKeeper`,
      );
      return;
    }
    if (definitions.length === 0) {
      this.logger.warn('no @ShardedJob() methods found; not connecting to ZooKeeper');
      return;
    }
    const registry = this.createJobsSession();
    for (const definition of definitions) this.schedulers.set(definition.config.jobName, this.newScheduler(definition));
    this.sessionStart = registry.start();
    const connected = await this.sessionStart;
    if (!connected) {
      // ZooKeeper trouble never stops the app: register as soon as it answers (subscribed, then looked: a
      // connection made in between is not missed), and again at the next connection if it went during the
      // conflict check.
      this.registerWhenConnected(registry);
      this.warnWithoutShutdownHooks(registry.settings.sessionTimeoutMilliseconds);
      return;
    }
    try {
      await this.registerAll();
    } catch (error) {
      await this.shutdownAll(0);
      await registry.close();
      throw error;
    }
    this.warnWithoutShutdownHooks(registry.settings.sessionTimeoutMilliseconds);
  }

  /**
   * The registration of an app that bootstrapped without ZooKeeper: at the first connection, and again at the next
   * one (same session or a new one) when the connection went during the conflict check. What no retry can mend (a
   * conflict, a server refusing the watch or our credentials) cannot fail the bootstrap any more: the app's jobs
   * are refused instead (they register together, as at bootstrap), each status saying why.
   */
  private registerWhenConnected(registry: ZookeeperRegistryCenter): void {
    let registering = false;
    const registerOnce = (): void => {
      if (registering || this.shutDown) return;
      registering = true;
      unsubscribe();
      void this.registerAll().catch((error: unknown) => {
        if (this.shutDown) return;
        if (!isConnectionTrouble(error)) return this.refuseAll(error);
        this.logger.warn(`job registration waits for ZooKeeper again: ${describeError(error)}`);
        this.registerWhenConnected(registry);
      });
    };
    const unsubscribe = registry.onStateChange(
      (change) => (change.state === 'CONNECTED' || change.state === 'RECONNECTED') && registerOnce(),
    );
    if (registry.isConnected()) registerOnce();
  }

  private refuseAll(error: unknown): void {
    const culprit = error instanceof JobConflictError ? error.jobName : undefined;
    const others =
      culprit === undefined
        ? `not registered: ${describeError(error)}`
        : `not registered: job '${culprit}' of this app conflicts (an app's jobs register together)`;
    const refused = [...this.schedulers.values()].filter((scheduler) =>
      scheduler.refuse(scheduler.jobName === culprit ? error : others),
    ).length;
    this.logger.error(
      `${refused} job(s) of this app refused, none registered: ${describeError(error)} Then restart the app; ` +
        `the jobs' statuses say so until then (health.registration 'failed').`,
    );
  }

  /**
   * Without Nest's shutdown hooks (app.enableShutdownHooks()), a SIGTERM ends the process without onModuleDestroy:
   * its nodes stay until its session times out, and peers wait that long to take its items over. Nest shows a
   * module no flag for it, but its hooks are process signal listeners; apps often enable them right after init
   * (createApplicationContext), so this looks a second after bootstrap has finished.
   */
  private warnWithoutShutdownHooks(sessionTimeoutMs: number): void {
    const timer = setTimeout(() => {
      const missing = !this.shutDown && process.listenerCount('SIGTERM') === 0;
      this.shutdownHooksCheck.resolve(missing);
      if (!missing) return;
      this.logger.warn(
        'shutdown hooks are not enabled (app.enableShutdownHooks()): on SIGTERM this instance leaves without ' +
          `deregistering, and its peers wait its session timeout (${sessionTimeoutMs} ms) to take its items over`,
      );
    }, SHUTDOWN_HOOKS_CHECK_MS);
    timer.unref();
  }

  /** The jobs' session, made once (at bootstrap, or by the first job added at run time). */
  private createJobsSession(): ZookeeperRegistryCenter {
    if (this.registry) return this.registry;
    const registry = new ZookeeperRegistryCenter(this.zookeeper);
    this.registry = registry;
    this.jobsSession.resolve(registry);
    return registry;
  }

  /** This process as ElasticJob names it: the IP (option or detected) and the pid, the same for every job. */
  instanceIdentity(): { ip: string; pid: number } {
    return (this.identity ??= { ip: this.options.instance?.ip ?? detectLocalIp(), pid: process.pid });
  }

  /**
   * Where items' kept lines go: the execution log and every keeper (read when a line book is given, so a keeper added
   * later is told too). None when neither is there: an item then makes no execution id of its own (item-attempts.ts).
   */
  private lineBookSetting(): { lineBook?: ExecutionLinesKeeper } {
    const log = this.executionLog;
    if (!log && this.lineKeepers.length === 0) return {};
    const keepers = this.lineKeepers;
    return {
      lineBook: {
        keepLines(executionId, lines) {
          log?.keepLines(executionId, lines);
          for (const keeper of keepers) keeper.keepLines(executionId, lines);
        },
      },
    };
  }

  /** A job's life on this instance, with the app's listeners; not registered yet. */
  private newScheduler(definition: JobDefinition): JobScheduler {
    const registry = this.createJobsSession();
    const zk = registry.settings;
    const scheduler = new JobScheduler(definition, registry, this.instanceIdentity(), {
      waitTimeoutMs: Math.max(10_000, 2 * zk.sessionTimeoutMilliseconds),
      baseSleepTimeMs: zk.baseSleepTimeMilliseconds,
      maxSleepTimeMs: zk.maxSleepTimeMilliseconds,
      maxRetries: zk.maxRetries,
      shutdownTimeoutMs: this.options.shutdownTimeoutMilliseconds ?? DEFAULT_SHUTDOWN_TIMEOUT_MS,
      eventSink: this.eventBus,
      itemInterceptors: this.itemInterceptors,
      scriptPolicy: this.explorer.scriptPolicy,
      ...(this.executionLog ? { executionLog: this.executionLog } : {}),
      ...this.lineBookSetting(),
    });
    const { jobName } = definition.config;
    const listeners = this.explorer.jobListeners.filter(
      ({ options }) => !options.jobs || options.jobs.includes(jobName),
    );
    if (listeners.length > 0) scheduler.addFiringHooks(listenerHooks(listeners, scheduler, scheduler.ctx.logger));
    return scheduler;
  }

  /**
   * A job added at run time (ElasticJobRegistry.addJob): validated as a decorated one, then registered on the
   * jobs' session (made now if the app had no decorated job). Rejects with the validation error, a JobConflictError,
   * or a RegistryError when ZooKeeper does not answer within the connection timeout; nothing stays half-added.
   */
  async addJob(definition: JobDefinition): Promise<void> {
    const { jobName } = definition.config;
    if (this.shutDown) throw new RegistryError('CLOSED', undefined, `Job '${jobName}': the application has shut down`);
    if (this.schedulers.has(jobName) || this.adding.has(jobName))
      throw new JobConfigurationError(jobName, 'jobName', 'is already a job of this app: remove it first');
    this.adding.add(jobName);
    try {
      const registry = this.createJobsSession();
      this.sessionStart ??= registry.start();
      await this.sessionStart;
      if (!registry.isConnected()) {
        const timeoutMs = registry.settings.connectionTimeoutMilliseconds;
        if (!(await registry.waitForConnection(timeoutMs)))
          throw new RegistryError(
            'CONNECTION_LOSS',
            undefined,
            `Job '${jobName}': ZooKeeper did not answer in ${timeoutMs} ms`,
          );
      }
      const scheduler = this.newScheduler(definition);
      try {
        await scheduler.checkConflict();
        await scheduler.register();
      } catch (error) {
        await scheduler.shutdown(0);
        throw error;
      }
      this.schedulers.set(jobName, scheduler);
    } finally {
      this.adding.delete(jobName);
    }
  }

  /**
   * Stops a job on this instance (ElasticJobRegistry.removeJob), as an app shutdown stops it: running items drain,
   * its running markers, leadership and instance node go, so peers reshard without it. Its config stays in ZooKeeper.
   */
  async removeJob(jobName: string): Promise<void> {
    const scheduler = this.schedulers.get(jobName);
    if (!scheduler) throw new JobNotFoundError(jobName, [...this.schedulers.keys()], 'app');
    this.schedulers.delete(jobName);
    await scheduler.shutdown(this.options.shutdownTimeoutMilliseconds ?? DEFAULT_SHUTDOWN_TIMEOUT_MS);
  }

  private async registerAll(): Promise<void> {
    const schedulers = [...this.schedulers.values()];
    // Conflicts first, for every job, so that nothing is written when one job is misconfigured.
    await mapBounded(schedulers, (scheduler) => scheduler.checkConflict(), REGISTRATION_CONCURRENCY);
    // A job that could not register yet retries in the background (its status says so); only what no retry
    // can mend is thrown.
    // Bounded while connected only: during an outage every job waits for the connection at the same time.
    const registry = this.registry;
    const results = await mapBoundedWhile(
      schedulers,
      (scheduler) =>
        scheduler.register().then(
          () => undefined,
          (reason: unknown) => ({ reason }),
        ),
      REGISTRATION_CONCURRENCY,
      () => registry?.isConnected() ?? false,
    );
    const failed = results.flatMap((result, index) =>
      result === undefined ? [] : [[schedulers[index]!.jobName, result.reason] as const],
    );
    for (const [jobName, reason] of failed) {
      this.logger.error(`job '${jobName}' could not register: ${describeError(reason)}`);
    }
    const registered = schedulers.filter((scheduler) => scheduler.isRegistered).length;
    this.logger.log(
      `${registered} of ${schedulers.length} job(s) ` +
        `registered${registered < schedulers.length - failed.length ? '; the others retry in the background' : ''}`,
    );
  }

  async onModuleDestroy(): Promise<void> {
    await this.shutdownAll(this.options.shutdownTimeoutMilliseconds ?? DEFAULT_SHUTDOWN_TIMEOUT_MS);
  }

  private async shutdownAll(timeoutMs: number): Promise<void> {
    await Promise.all([...this.schedulers.values()].map((scheduler) => scheduler.shutdown(timeoutMs)));
  }

  async onApplicationShutdown(): Promise<void> {
    this.shutDown = true;
    this.jobsSession.reject(new RegistryError('CLOSED', undefined, 'the application has shut down'));
    await this.shutdownAll(0); // no-op when onModuleDestroy ran
    await this.registry?.close();
    const operatorSession = this.operatorSession;
    this.operatorSession = undefined;
    await (await operatorSession?.catch(() => undefined))?.close();
    this.eventBus.close();
  }
}
