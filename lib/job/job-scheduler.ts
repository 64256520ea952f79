import { describeNextFirings } from '../schedule/cron-preview.js';
import { Logger } from '@nestjs/common';
import type { RegistryCenter } from '../registry/registry-center.js';
import { JobEventPublisher, type JobEventSink } from './events/job-event-publisher.js';
import { CronTrigger } from '../schedule/cron-trigger.js';
import {
  describeError,
  isConnectionTrouble,
  JobConfigurationError,
  JobConflictError,
  registryErrorCode,
  withinBound,
} from '../errors/elastic-job.errors.js';
import { type CustomPlugins, JobPlugins } from './plugins/job-plugins.js';
import { backoffMs, delay } from '../util/deferred.js';
import { ConfigService } from './config/config.service.js';
import type { JobConfiguration } from './config/job-configuration.js';
import { LeaderService } from './election/leader.service.js';
import { ExecutionService } from './execution/execution.service.js';
import { FailoverService } from './failover/failover.service.js';
import { GuaranteeService } from './guarantee/guarantee.service.js';
import { ReconcileService } from './reconcile/reconcile.service.js';
import { JobExecutor, PREPARE_AHEAD_MS } from './execution/job-executor.js';
import type { JobHandler } from './execution/item-executor.js';
import { DataflowItemExecutor } from './execution/dataflow-item-executor.js';
import type { DataflowJobHandler } from '../interfaces/dataflow-job.interface.js';
import type { ItemInterceptor } from '../interfaces/item-interceptor.interface.js';
import type { ExecutionEvents, FiringHooks } from './execution/execution-events.js';
import { InstanceService } from './instance/instance.service.js';
import type { JobContext } from './job-context.js';
import { ClusterChangeReactions } from './reaction/cluster-change-reactions.js';
import { CoordinationEventWatcher } from './reaction/coordination-event-watcher.js';
import { buildInstanceId, JobNodePath } from './paths.js';
import { ServerService, SERVER_DISABLED, SERVER_ENABLED } from './server/server.service.js';
import { ShardingService } from './sharding/sharding.service.js';
import { JobNodeStorage } from './storage/job-node-storage.js';

/** A discovered `@ShardedJob()` method, validated. */
export interface JobDefinition {
  config: JobConfiguration;
  /**
   * The custom strategy and error handler objects its options gave, and the app's providers decorated as named
   * ones (every job may name any of them), registered under their type names.
   */
  plugins?: CustomPlugins;
  /** The job's identity (`jobClass`, default `ClassName.methodName`): stored in its root node, compared on join. */
  owner: string;
  handler: JobHandler;
  /** The job type, which chooses the item executor. Default 'SIMPLE' (the handler is called once per item). */
  type?: string;
  /** At most this many items at once in this process (`@ShardedJob({ maxConcurrentItems })`); no cap when undefined. */
  maxConcurrentItems?: number;
  /** A `@DataflowJob()` provider (type DATAFLOW): its fetch/process methods, and whether it streams. */
  dataflow?: { handler: DataflowJobHandler<unknown>; streaming: boolean };
}

export interface JobIdentity {
  ip: string;
  pid: number;
}

export interface JobSchedulerSettings {
  waitTimeoutMs: number;
  baseSleepTimeMs: number;
  maxSleepTimeMs: number;
  maxRetries: number;
  /** What a "minute" of `reconcileIntervalMinutes` lasts; 60000 except in tests. */
  reconcileMinuteMs?: number;
  /** How long an operator's shutdown waits for running items (their signal aborted) before cleaning up. */
  shutdownTimeoutMs?: number;
  /** Where the job's public events go (the module's ElasticJobEventBus); nowhere when not given. */
  eventSink?: JobEventSink;
  /** The app's item interceptors (a shared list, read at each item). */
  itemInterceptors?: readonly ItemInterceptor[];
}

type SchedulerState = 'LATENT' | 'REGISTERING' | 'REGISTERED' | 'SHUTDOWN';

/** A snapshot of one job on this instance, for the public `ElasticJobRegistry`. */
export interface JobStatus {
  jobName: string;
  instanceId: string;
  /** Registered in ZooKeeper and scheduled (re-registration after a new session included); false once shut down. */
  registered: boolean;
  /** The ZooKeeper session is connected right now (disconnected, firings are skipped and caught up later). */
  connected: boolean;
  /** This instance holds the job's leader node, as far as a connected session can tell (false while disconnected). */
  isLeader: boolean;
  /** Items assigned to this instance by the last sharding. */
  shardingItems: number[];
  /** Items running on this instance right now. */
  runningItems: number[];
  /** A firing (with its misfire catch-up runs) is in progress on this instance. */
  firing: boolean;
  nextFireTime: Date | undefined;
  /**
   * Set once the job has stopped on this instance: by the application shutting down, or by an operator deleting
   * this instance's `instances/{id}` node (ElasticJob's lifecycle shutdown). It stays stopped until the app restarts.
   */
  shutdown?: { by: 'application' | 'operator'; at: Date; reason: string };
  /** Whether this instance is registered in ZooKeeper as it should be, or retrying, and the last error. */
  health: JobHealth;
  /** When the last firing that ran items here started (as `@nestjs/schedule`'s `lastDate()`); undefined before. */
  lastFireTime: Date | undefined;
  /**
   * The last completion here of each item this instance owns now (`shardingItems`): when, and whether it succeeded
   * (with the error's message when not). An owned item that has not run here since it became ours is absent.
   */
  lastCompletions: Record<number, ItemCompletion>;
}

/** One item's last completion on this instance. */
export interface ItemCompletion {
  completeTime: Date;
  success: boolean;
  failureMessage?: string;
}

/**
 * `ok`: registered (or re-registered after a new session). `retrying`: not registered yet, or a registration or
 * re-registration failed and is being retried with backoff. `failed`: it cannot succeed (a name conflict, a bad
 * configuration), nothing is retried. `since`: when this state began.
 */
export interface JobHealth {
  registration: 'ok' | 'retrying' | 'failed';
  since: Date;
  lastError?: string;
}

/** How long a shutdown's deregistration (markers, leader and instance nodes) may take in all. */
const DEREGISTRATION_BOUND_MS = 5_000;

/**
 * The life of one job on this instance (ElasticJob's JobScheduler + SetUpFacade + SchedulerFacade, docs/SPEC.md §3):
 * registration, the cron trigger, re-registration on a new session, and graceful shutdown.
 */
export class JobScheduler {
  readonly ctx: JobContext;
  private readonly configService: ConfigService;
  private readonly servers: ServerService;
  private readonly instances: InstanceService;
  private readonly leader: LeaderService;
  private readonly sharding: ShardingService;
  private readonly execution: ExecutionService;
  private readonly failover: FailoverService;
  private readonly reconcile: ReconcileService;
  private readonly executor: JobExecutor;
  private readonly reactions: ClusterChangeReactions;
  private readonly coordinationEvents: CoordinationEventWatcher;
  private readonly guarantee: GuaranteeService;
  private readonly trigger: CronTrigger;
  private state: SchedulerState = 'LATENT';
  private shutdownRecord: JobStatus['shutdown'];
  private health: JobHealth = { registration: 'retrying', since: new Date(), lastError: 'not registered yet' };
  /** The background retry loop of a failed (re-)registration, while one runs. */
  private retrying: Promise<void> | undefined;
  /** Aborted at shutdown: ends retry waits at once. */
  private readonly stopping = new AbortController();
  private readonly unsubscribes: Array<() => void> = [];
  private lastFireTime: Date | undefined;
  private readonly lastCompletions = new Map<number, ItemCompletion>();

  constructor(
    readonly definition: JobDefinition,
    registry: RegistryCenter,
    identity: JobIdentity,
    private readonly settings: JobSchedulerSettings,
  ) {
    const { jobName } = definition.config;
    const paths = new JobNodePath(jobName);
    const logger = new Logger(`ElasticJob:${jobName}`);
    const instanceId = buildInstanceId(identity.ip, identity.pid);
    this.ctx = {
      jobName,
      paths,
      connection: registry,
      logger,
      storage: new JobNodeStorage(registry, paths, logger),
      instanceId,
      ip: identity.ip,
      waitTimeoutMs: settings.waitTimeoutMs,
      plugins: new JobPlugins(logger, definition.plugins, definition.handler),
      events: new JobEventPublisher(settings.eventSink, { jobName, instanceId, ip: identity.ip }),
    };
    this.configService = new ConfigService(this.ctx, definition.config, definition.owner);
    this.servers = new ServerService(this.ctx);
    this.instances = new InstanceService(this.ctx, this.servers);
    this.leader = new LeaderService(this.ctx, this.servers, () => this.instances.isLocalInstanceOnline());
    this.execution = new ExecutionService(this.ctx, this.instances);
    this.sharding = new ShardingService(this.ctx, this.leader, this.servers, this.instances, this.execution);
    this.failover = new FailoverService(this.ctx, this.servers, this.instances);
    this.reconcile = new ReconcileService(
      this.ctx,
      this.configService,
      this.leader,
      this.sharding,
      () => this.checkOwnNodes(),
      settings.reconcileMinuteMs,
    );
    const type = definition.type ?? 'SIMPLE';
    const itemExecutor = definition.dataflow
      ? new DataflowItemExecutor(definition.dataflow.handler, definition.dataflow.streaming, () =>
          this.sharding.isNeedSharding(),
        )
      : this.ctx.plugins.itemExecutor(type);
    if (!itemExecutor)
      throw new JobConfigurationError(
        jobName,
        'type',
        `'${type}' is not a job type; one of: ${this.ctx.plugins.names().itemExecutors.join(', ')}`,
      );
    this.executor = new JobExecutor(
      this.ctx,
      this.configService,
      this.sharding,
      this.execution,
      this.failover,
      itemExecutor,
      settings.itemInterceptors,
      definition.maxConcurrentItems,
    );
    this.ctx.events.follow(this.executor.events);
    this.executor.events.on('firing-started', (firing) => (this.lastFireTime = firing.startTime));
    this.executor.events.on('item-completed', (item) =>
      this.lastCompletions.set(item.shardingItem, {
        completeTime: item.completeTime,
        success: item.success,
        ...(item.success ? {} : { failureMessage: describeError(item.failureCause) }),
      }),
    );
    this.guarantee = new GuaranteeService(this.ctx, this.servers);
    this.coordinationEvents = new CoordinationEventWatcher(this.ctx, this.configService, this.leader, this.sharding);
    this.trigger = new CronTrigger(
      definition.config.cron,
      definition.config.timeZone,
      (at) => this.executor.fire(at.getTime()),
      PREPARE_AHEAD_MS,
    );
    this.reactions = new ClusterChangeReactions(
      this.ctx,
      this.configService,
      this.leader,
      this.servers,
      this.instances,
      this.sharding,
      this.failover,
      this.execution,
      {
        onScheduleChange: (config) => this.trigger.reschedule(config.cron, config.timeZone),
        onTrigger: (jobParameter) => this.executor.trigger(jobParameter),
        onFailoverWaiting: () => this.executor.failoverIfNecessary(),
        onOwnInstanceDeleted: () => this.onOwnInstanceDeleted(),
      },
    );
  }

  get jobName(): string {
    return this.ctx.jobName;
  }

  /** This job's execution events on this instance (firings and items started, completed, skipped). */
  get events(): ExecutionEvents {
    return this.executor.events;
  }

  /** Hooks awaited around every firing of this job on this instance. Returns the call that removes them. */
  addFiringHooks(hooks: FiringHooks): () => void {
    return this.executor.addHooks(hooks);
  }

  /**
   * Runs `callback` once across the cluster when every item of the job has `started` (or `completed`) on some
   * instance, this one bringing `items` (distribute-once listeners; see GuaranteeService). Rejects with
   * CoordinationTimeoutError after `timeoutMs`.
   */
  distributeOnce(
    kind: 'started' | 'completed',
    items: readonly number[],
    timeoutMs: number,
    callback: () => Promise<void>,
  ): Promise<void> {
    return this.guarantee.once(
      kind,
      items,
      this.configService.load().shardingTotalCount,
      timeoutMs,
      callback,
      this.stopping.signal,
    );
  }

  get isRegistered(): boolean {
    return this.state === 'REGISTERED';
  }

  /** Reads only: fails with JobConflictError when another method owns the job name in ZooKeeper. */
  checkConflict(): Promise<void> {
    // Connection trouble is retried as registration's is; a conflict is thrown at once.
    return this.withRetries('conflict check', () => this.configService.checkConflict());
  }

  /**
   * ElasticJob's registerStartUpInfo: config, cache and listeners, election, `servers/{ip}`, `instances/{id}`,
   * resharding flag; then the cron trigger. Connection trouble is retried at once with backoff; a registration
   * that still fails is retried in the background until it succeeds or the app shuts down (see `status().health`).
   * Resolves after the first attempt; throws only what no retry can mend (a name conflict, a bad configuration).
   */
  async register(): Promise<void> {
    if (this.state !== 'LATENT') return;
    this.state = 'REGISTERING';
    this.unsubscribes.push(
      this.ctx.connection.onNewSession(() => this.reRegister()),
      this.ctx.connection.onStateChange((change) => {
        // Another instance may take our items over once the session is gone: tell the handlers.
        // Registered: nothing starts until re-registered on the new session (our cache may show items that peers
        // take over meanwhile). Still registering: that registration runs on the new session.
        if (change.state === 'LOST' && this.state === 'REGISTERED') {
          this.executor.sessionLost();
          this.ctx.events.publish('session.lost', {});
        } else if (change.state === 'LOST') this.executor.abortAll('ZooKeeper session lost');
        // Same session: go on at once. A new session: after re-registration (see tryReRegistration).
        if (change.state === 'RECONNECTED' && !change.newSession && this.state === 'REGISTERED')
          this.executor.catchUpAfterReconnect();
      }),
    );
    if (!(await this.tryRegistration())) this.retryInBackground('registration', () => this.tryRegistration());
  }

  /** One registration (with its quick retries). False when it failed and may be retried; cleans up after itself. */
  private async tryRegistration(): Promise<boolean> {
    if (this.state !== 'REGISTERING') return true;
    try {
      await this.withRetries('registration', async () => {
        // The cache first: the set-up is planned from it, and our own writes reach it without reads.
        await this.ctx.storage.startCache();
        await this.configService.setUp();
        this.reactions.start({ registering: true });
        await this.leader.electLeader();
        const announced = await this.announceNewInstance();
        if (announced === undefined) {
          await this.servers.persistOnline(!this.configService.load().disabled);
          await this.instances.persistOnline();
        }
        await this.ctx.storage.cached.settled();
        await this.servers.removeOfflineServers();
        if (this.leader.isLeader() && !announced?.flagged) await this.sharding.setReshardingFlag();
        this.reactions.registered();
        if (this.configService.load().failover)
          await this.failover.recoverLegacyCrashedItems(this.configService.load());
      });
    } catch (error) {
      // Half-registered is worse than absent: a leader that never fires would stall its peers.
      this.reactions.stop();
      await this.leader.removeLeader().catch(() => undefined);
      await this.instances.removeInstance().catch(() => undefined);
      // What no retry can mend: a conflict, a bad configuration, a request ZooKeeper would refuse whatever happens.
      const permanent =
        error instanceof JobConflictError ||
        error instanceof JobConfigurationError ||
        registryErrorCode(error) === 'REQUEST_TOO_LARGE';
      if (permanent) {
        this.setHealth('failed', error);
        throw error;
      }
      this.setHealth('retrying', error);
      return false;
    }
    if (this.state !== 'REGISTERING') return true; // shut down meanwhile
    this.state = 'REGISTERED';
    this.setHealth('ok');
    this.trigger.reschedule(this.configService.load().cron, this.configService.load().timeZone);
    this.trigger.start();
    this.reconcile.start();
    this.coordinationEvents.start();
    void this.executor
      .failoverIfNecessary()
      .catch((error: unknown) => this.ctx.logger.warn(`failover claim failed: ${String(error)}`));
    const { cron, timeZone } = this.configService.load();
    this.ctx.logger.log(
      `registered as ${this.ctx.instanceId}; ` +
        (cron === '' ? 'one-off: runs when triggered' : `next firings ${describeNextFirings(cron, timeZone)}`),
    );
    return true;
  }

  /**
   * ElasticJob writes `servers/{ip}`, `instances/{id}` and (the leader) the resharding flag one request each. When
   * the cache shows none of them (a new job, or the first instance on this IP after a clean stop) they go in one
   * transaction: two requests, and their watch events, fewer per job at start-up. Undefined, with nothing written,
   * when the cache shows any of them or ZooKeeper disagrees with it: the step-by-step way then runs.
   */
  private async announceNewInstance(): Promise<{ flagged: boolean } | undefined> {
    const { storage, paths, ip, instanceId } = this.ctx;
    const cached = [paths.server(ip), paths.instance(instanceId), paths.shardingNecessary];
    if (cached.some((path) => storage.cached.has(path))) return undefined;
    const ops = [
      storage.createOp(paths.server(ip), this.configService.load().disabled ? SERVER_DISABLED : SERVER_ENABLED),
      this.instances.createOp(),
    ];
    const flagged = this.leader.isLeader();
    if (flagged) ops.push(storage.createOp(paths.shardingNecessary, ''));
    const session = this.ctx.connection.getSessionId();
    try {
      await storage.transaction(ops);
    } catch (error) {
      const code = registryErrorCode(error);
      if (code === 'NODE_EXISTS' || code === 'NO_NODE') return undefined;
      throw error;
    }
    this.instances.recordCreated(session);
    return { flagged };
  }

  /** After a new session: our ephemeral nodes are gone. Put them back, clear stale markers, re-elect. */
  private async reRegister(): Promise<void> {
    if (this.state === 'REGISTERED' && !(await this.tryReRegistration()))
      this.retryInBackground('re-registration', () => this.tryReRegistration());
  }

  private async tryReRegistration(): Promise<boolean> {
    if (this.state !== 'REGISTERED') return true;
    try {
      // Removed while our session was gone (ElasticJob's removeJobConfiguration): stop, writing nothing back.
      let removed = false;
      await this.withRetries('re-registration', async () => {
        removed = (await this.ctx.storage.direct.exists(this.ctx.paths.config)) === undefined;
      });
      if (removed) {
        await this.stopAsRemoved();
        return true;
      }
      await this.withRetries('re-registration', async () => {
        // The cache first: its watch back on this connection and the tree re-read (it started on RECONNECTED).
        await this.ctx.storage.startCache();
        // Our running markers first: once our instance node is replaced, peers look for items we were running.
        // What we ran on the old session was aborted with it, and must not be failed over on top of our new runs.
        await this.execution.clearOwnRunningInfo(this.configService.load().shardingTotalCount, {
          keepRunningHere: true,
        });
        const server = await this.ctx.storage.direct.get(this.ctx.paths.server(this.ctx.ip));
        const enabled = server === undefined ? !this.configService.load().disabled : server !== SERVER_DISABLED;
        await this.servers.persistOnline(enabled);
        await this.instances.persistOnline();
        if (
          (await this.ctx.storage.direct.get(this.ctx.paths.leaderElectionInstance)) === undefined &&
          server !== SERVER_DISABLED
        ) {
          await this.leader.electLeader();
        }
      });
    } catch (error) {
      this.setHealth('retrying', error);
      return false;
    }
    this.setHealth('ok');
    this.ctx.logger.log(
      `re-registered on the new session (server ${SERVER_ENABLED.toLowerCase()}: ` +
        `${this.servers.isEnableServer(this.ctx.ip)})`,
    );
    // Items may start again, beginning with the firing skipped while the session was gone, if any.
    this.executor.rejoined();
    this.ctx.events.publish('session.rejoined', {});
    return true;
  }

  /**
   * Retries `attempt` with backoff (up to ten times maxSleepTimeMilliseconds between tries) while connected,
   * until it succeeds, fails for good, or the job shuts down. One retry loop at a time.
   */
  private retryInBackground(what: string, attempt: () => Promise<boolean>): void {
    if (this.retrying) return;
    const run = async (): Promise<void> => {
      const stopped = (): boolean => this.stopping.signal.aborted;
      for (let round = 0; !stopped() && this.health.registration === 'retrying'; round++) {
        const wait = backoffMs(round, this.settings.baseSleepTimeMs, 10 * this.settings.maxSleepTimeMs);
        this.ctx.logger.warn(`${what} failed (${this.health.lastError}); trying again in ${wait} ms`);
        await delay(wait, this.stopping.signal);
        if (stopped()) return;
        // Not connected: the next round waits again (a closed registry answers false at once).
        if (!(await this.ctx.connection.waitForConnection(this.ctx.connection.sessionTimeoutMs))) continue;
        if (stopped() || (await attempt())) return;
      }
    };
    this.retrying = run()
      .catch((error: unknown) => this.ctx.logger.error(`${what} failed for good: ${describeError(error)}`))
      .finally(() => (this.retrying = undefined));
  }

  private setHealth(registration: JobHealth['registration'], error?: unknown): void {
    const lastError = error === undefined ? undefined : describeError(error);
    if (registration !== this.health.registration)
      this.health = { registration, since: new Date(), ...(lastError ? { lastError } : {}) };
    else if (lastError) this.health = { ...this.health, lastError };
  }

  /**
   * Reconcile's look at our own nodes (every reconcile tick, from the cache): our instance node missing on a
   * session we registered on is an operator's deletion the listener missed; missing after a new session, a
   * re-registration to redo. Our server node missing (a peer's clean-up racing our start, an operator) is put back.
   */
  private async checkOwnNodes(): Promise<void> {
    if (this.state !== 'REGISTERED' || !this.ctx.connection.isConnected()) return;
    if (!this.instances.isLocalInstanceOnline()) {
      const verdict = await this.instances.checkOwnNodeDeleted();
      if (verdict === 'deleted') await this.onOwnInstanceDeleted();
      else if (verdict === 'session-changed') {
        this.ctx.logger.warn('reconcile: our instance node is missing on this session: registering it again');
        await this.reRegister();
      }
    }
    const server = this.ctx.paths.server(this.ctx.ip);
    if (this.state === 'REGISTERED' && !this.ctx.storage.cached.has(server)) {
      this.ctx.logger.warn(`reconcile: ${this.ctx.storage.fullPath(server)} is missing: putting it back`);
      await this.servers.persistOnline(!this.configService.load().disabled);
    }
  }

  /**
   * docs/SPEC.md §3 shutdown: stop the trigger; wait for running items (then abort their signal); remove our running
   * markers; if leader delete the leader node (a peer takes over at once); delete our instance node.
   */
  async shutdown(timeoutMs: number): Promise<void> {
    if (this.state === 'SHUTDOWN') return;
    const wasRegistered = this.state === 'REGISTERED';
    this.state = 'SHUTDOWN';
    this.stopping.abort();
    this.shutdownRecord = { by: 'application', at: new Date(), reason: 'the application shut down' };
    this.trigger.stop();
    this.reconcile.stop();
    this.coordinationEvents.stop();
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    await this.executor.stop(timeoutMs);
    this.reactions.stop();
    if (wasRegistered && this.ctx.connection.isConnected()) {
      const steps: Array<[string, () => Promise<void>]> = [
        [
          'remove running markers',
          () => this.execution.clearOwnRunningInfo(this.configService.load().shardingTotalCount),
        ],
        ['remove leader node', () => this.leader.removeLeader()],
        ['remove instance node', () => this.instances.removeInstance()],
      ];
      // Bounded all together: a silent partition must not hold the app's shutdown (the client holds requests until
      // it reconnects). What is not removed goes with the session; peers then wait for its timeout, as for a crash.
      const deadline = Date.now() + Math.min(this.ctx.connection.sessionTimeoutMs, DEREGISTRATION_BOUND_MS);
      for (const [what, step] of steps) {
        const left = deadline - Date.now();
        const done =
          left > 0 ? withinBound(step(), left, `shutdown: ${what}`) : Promise.reject(new Error('no time left'));
        await done.catch((error: unknown) =>
          this.ctx.logger.warn(`shutdown: could not ${what}: ${describeError(error)}`),
        );
      }
    }
    this.ctx.storage.closeCache();
    this.ctx.logger.log('shut down');
  }

  /**
   * `instances/{me}` is gone. Deleted while our session lives, it is an operator's shutdown of this job on this
   * instance (ElasticJob's lifecycle `shutdown` deletes it; its ShutdownListenerManager then shuts the instance
   * down): we stop here. Gone with an earlier session, it is not: re-registration on the new session puts it
   * back. Gone with the config node, the job was removed (ElasticJob's removeJobConfiguration deletes its tree):
   * we stop, writing nothing back. Gone together with the whole `instances` node but not the config, it is taken
   * as an accident (no ElasticJob tool deletes that node alone): we put ours back and go on, with a warning.
   */
  private async onOwnInstanceDeleted(): Promise<void> {
    if (
      this.state !== 'REGISTERED' ||
      (await this.instances.checkOwnNodeDeleted()) !== 'deleted' ||
      this.state !== 'REGISTERED'
    )
      return;
    const { storage, paths, logger } = this.ctx;
    const node = storage.fullPath(paths.instance(this.ctx.instanceId));
    // ElasticJob's removeJobConfiguration deletes the job's whole tree: the job is gone from the cluster.
    if ((await storage.direct.exists(paths.config)) === undefined) {
      await this.stopAsRemoved();
      return;
    }
    // The directory gone, or seen gone and already put back by a peer: an accident (zkCli deleteall, a console).
    if (this.instances.wentWithDirectory() || (await storage.direct.exists(paths.instances)) === undefined) {
      // Only while the config node is there, in one request: a removal of the whole job (Curator deletes children
      // one by one, `instances` maybe before `config`) must not be undone by our putting the directory back.
      if (!(await this.instances.restoreAfterAccident(paths.config))) {
        await this.stopAsRemoved();
        return;
      }
      logger.warn(
        `${storage.fullPath(paths.instances)} was deleted with every instance under it: taken as an accident, ` +
          `re-created ${node} (to stop this job on an instance, delete only that instance's node)`,
      );
      return;
    }
    // The listener and the reconcile may both have looked: stop once.
    if (this.state !== 'REGISTERED') return;
    await this.stopByOperator(`${node} was deleted while this instance's session lives`);
    // Curator removes a job's tree child by child (ZKPaths.deleteChildren), so a removal of the whole job can take
    // our instance node before the config node: if the config node goes too, the stop is told as a removal.
    await storage.direct
      .whenDeleted(paths.config, () => this.retellAsRemoved())
      .catch((error: unknown) => logger.debug(`could not watch ${paths.config}: ${describeError(error)}`));
  }

  /** Stopped by an operator's deletion of our instance node, then the config node went: the job was removed. */
  private retellAsRemoved(): void {
    if (this.shutdownRecord?.by !== 'operator') return;
    this.shutdownRecord = { ...this.shutdownRecord, reason: this.removedReason() };
    this.ctx.logger.log(`${this.removedReason()} after it stopped here`);
  }

  /** How a stop by the job's removal is told (the status's shutdown reason, logs). */
  private removedReason(): string {
    return `the job was removed from ZooKeeper (${this.ctx.storage.fullPath(this.ctx.paths.config)} is gone)`;
  }

  /** The job's config node is gone: removed from the cluster (ElasticJob's removeJobConfiguration). Stops once. */
  private async stopAsRemoved(): Promise<void> {
    if (this.state !== 'REGISTERED') return;
    await this.stopByOperator(this.removedReason());
  }

  /** ElasticJob's remote shutdown, cleaned up as its own shutdown is (ElasticJob leaks listeners here: #2437). */
  private async stopByOperator(reason: string): Promise<void> {
    this.state = 'SHUTDOWN';
    this.stopping.abort();
    this.shutdownRecord = { by: 'operator', at: new Date(), reason };
    this.ctx.logger.warn(`shut down by an operator: ${reason}. The job stops on this instance until the app restarts.`);
    // Our items may be taken over as soon as peers see us gone: before anything is awaited, nothing may start any
    // more (no firing, no item of the current one, no failover claim), running handlers are told, and the
    // reactions stop; then the leadership goes at once.
    const drained = this.executor.halt(
      'this job was shut down on this instance by an operator',
      this.settings.shutdownTimeoutMs ?? this.settings.waitTimeoutMs,
    );
    this.trigger.stop();
    this.reconcile.stop();
    this.reactions.stop();
    this.coordinationEvents.stop();
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    const steps: Array<[string, () => Promise<unknown>]> = [
      ['remove the leader node', () => this.leader.removeLeader()],
      ['wait for running items', () => drained],
      [
        'remove running markers',
        () => this.execution.clearOwnRunningInfo(this.configService.load().shardingTotalCount),
      ],
    ];
    for (const [what, step] of steps) {
      await step().catch((error: unknown) =>
        this.ctx.logger.warn(`operator shutdown: could not ${what}: ${describeError(error)}`),
      );
    }
    this.ctx.storage.closeCache();
  }

  /** Fires the job now on every live instance (job/instance/trigger-all-instances.ts); resolves with how many. */
  async triggerAllInstances(jobParameter?: string): Promise<number> {
    return (await this.ctx.storage.triggerAllInstances(jobParameter)).length;
  }

  status(): JobStatus {
    const registered = this.state === 'REGISTERED';
    const connected = this.ctx.connection.isConnected();
    const shardingItems = registered
      ? this.sharding.getShardingItems(this.ctx.instanceId, this.configService.load().shardingTotalCount)
      : [];
    const lastCompletions: Record<number, ItemCompletion> = {};
    for (const item of shardingItems) {
      const completion = this.lastCompletions.get(item);
      if (completion) lastCompletions[item] = { ...completion };
    }
    return {
      jobName: this.jobName,
      instanceId: this.ctx.instanceId,
      registered,
      connected,
      // Disconnected, the leader node may be gone with our session any moment: not claimed.
      isLeader: registered && connected && this.leader.isLeader(),
      shardingItems,
      runningItems: this.executor.runningItems(),
      firing: this.executor.isFiring,
      nextFireTime: this.trigger.isRunning ? this.trigger.nextFireTime() : undefined,
      ...(this.shutdownRecord ? { shutdown: this.shutdownRecord } : {}),
      health: { ...this.health },
      lastFireTime: this.lastFireTime,
      lastCompletions,
    };
  }

  /** Runs `action`, retrying connection trouble with exponential backoff; other errors are thrown at once. */
  private async withRetries(what: string, action: () => Promise<void>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await action();
        return;
      } catch (error) {
        // A closed registry center will not come back: only connection trouble that may pass is retried.
        const transient = isConnectionTrouble(error) && registryErrorCode(error) !== 'CLOSED';
        if (!transient || this.state === 'SHUTDOWN' || attempt >= this.settings.maxRetries) throw error;
        const wait = backoffMs(attempt, this.settings.baseSleepTimeMs, this.settings.maxSleepTimeMs);
        this.ctx.logger.warn(
          `${what} hit ${registryErrorCode(error)}; retry ${attempt + 1}/${this.settings.maxRetries} in ${wait} ms`,
        );
        await this.ctx.connection.waitForConnection(this.ctx.connection.sessionTimeoutMs);
        await delay(wait);
      }
    }
  }
}
