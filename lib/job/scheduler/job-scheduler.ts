import type { RegistryCenter } from '../../registry/registry-center.js';
import { describeError } from '../../errors/elastic-job.errors.js';
import type { ExecutionEventMap, ExecutionEvents, ExecutionObserver, FiringHooks } from '../events/execution-events.js';
import type { JobContext } from '../context/job-context.js';
import type { JobDefinition, JobIdentity, JobSchedulerSettings } from './job-definition.js';
import { healthOf, isRegistered, JobLifecycleHolder, stopOf, type JobHealth, type JobStop } from './job-lifecycle.js';
import { wireJobServices, type JobServices } from './job-services.js';
import { JobRegistration } from './registration.js';
import { RetryPolicy } from './retry-policy.js';
import { runTeardown, type TeardownActions, type TeardownPlan } from './teardown-plan.js';

export type { JobDefinition, JobIdentity, JobSchedulerSettings } from './job-definition.js';
export type { JobHealth } from './job-lifecycle.js';

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
  shutdown?: JobStop;
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
 * The life of one job on this instance (ElasticJob's JobScheduler + SetUpFacade + SchedulerFacade, docs/SPEC.md §3),
 * put together from its parts in scheduler/: the wiring of its services and firing loop (job-services.ts), its
 * registration and healing with one retry policy (registration.ts, retry-policy.ts), one teardown plan for every
 * way it stops (teardown-plan.ts), and its lifecycle as one value (job-lifecycle.ts), which status() reads.
 */
export class JobScheduler {
  readonly ctx: JobContext;
  private readonly services: JobServices;
  private readonly lifecycle = new JobLifecycleHolder();
  private readonly registration: JobRegistration;
  private readonly record = new FiringRecord();

  constructor(
    readonly definition: JobDefinition,
    registry: RegistryCenter,
    identity: JobIdentity,
    private readonly settings: JobSchedulerSettings,
  ) {
    this.services = wireJobServices(definition, registry, identity, settings, {
      checkOwnNodes: () => this.registration.checkOwnNodes(),
      onOwnInstanceDeleted: () => this.registration.onOwnInstanceDeleted(),
    });
    this.ctx = this.services.ctx;
    const retry = new RetryPolicy(settings, this.ctx.connection, this.ctx.logger, this.lifecycle);
    this.registration = new JobRegistration(this.services, this.lifecycle, retry, {
      stopByOperator: (reason) => this.stopByOperator(reason),
      retell: (reason) => this.retellStop(reason),
    });
    this.services.executor.events.observe(this.record);
  }

  get jobName(): string {
    return this.ctx.jobName;
  }

  /** This job's execution events on this instance (firings and items started, completed, skipped). */
  get events(): ExecutionEvents {
    return this.services.executor.events;
  }

  /** Hooks awaited around every firing of this job on this instance. Returns the call that removes them. */
  addFiringHooks(hooks: FiringHooks): () => void {
    return this.services.executor.addHooks(hooks);
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
    const total = this.services.config.load().shardingTotalCount;
    return this.services.guarantee.once(kind, items, total, timeoutMs, callback, this.lifecycle.stopSignal);
  }

  get isRegistered(): boolean {
    return isRegistered(this.lifecycle.current);
  }

  /** Reads only: fails with JobConflictError when another method owns the job name in ZooKeeper. */
  checkConflict(): Promise<void> {
    return this.registration.checkConflict();
  }

  /**
   * ElasticJob's registerStartUpInfo: config, cache and listeners, election, `servers/{ip}`, `instances/{id}`,
   * resharding flag; then the cron trigger. Connection trouble is retried at once with backoff; a registration
   * that still fails is retried in the background until it succeeds or the app shuts down (see `status().health`).
   * Resolves after the first attempt; throws only what no retry can mend (a name conflict, a bad configuration).
   */
  register(): Promise<void> {
    return this.registration.register();
  }

  /**
   * Not to be registered: the app's conflict check failed after bootstrap (ZooKeeper answered late) in a way no
   * retry mends, for this job or another of the app's (they register together, as at bootstrap). Its status says
   * why (`health.registration` `failed`), and the cache the check started is closed. Nothing of it was written;
   * only a restart registers it. False, and left as it is, when it was not latent (added at run time meanwhile).
   */
  refuse(error: unknown): boolean {
    if (this.lifecycle.move({ type: 'refused', error }).kind !== 'failed') return false;
    this.ctx.storage.closeCache();
    return true;
  }

  /**
   * The app's stop of this job (its shutdown, or `removeJob`), docs/SPEC.md §3: the trigger stops; running items
   * are waited for up to `timeoutMs` (then their signal is aborted); our running markers, the leader node (a peer
   * takes over at once) and our instance node are removed.
   */
  async shutdown(timeoutMs: number): Promise<void> {
    const before = this.lifecycle.current;
    if (before.kind === 'stopped') return;
    this.lifecycle.move({ type: 'stop', by: 'application', reason: 'the application shut down' });
    await this.teardown(
      { peersSeeUsGone: false, wasRegistered: isRegistered(before) },
      timeoutMs,
      'shutdown',
      'the application shut down',
    );
    this.ctx.logger.log('shut down');
  }

  /** ElasticJob's remote shutdown, cleaned up as its own shutdown is (ElasticJob leaks listeners here: #2437). */
  private async stopByOperator(reason: string): Promise<void> {
    if (this.lifecycle.current.kind === 'stopped') return;
    this.lifecycle.move({ type: 'stop', by: 'operator', reason });
    this.ctx.logger.warn(`shut down by an operator: ${reason}. The job stops on this instance until the app restarts.`);
    await this.teardown(
      { peersSeeUsGone: true, wasRegistered: true },
      this.settings.shutdownTimeoutMs ?? this.settings.waitTimeoutMs,
      'operator shutdown',
      'this job was shut down on this instance by an operator',
    );
  }

  /** The teardown plan run over this job's services (scheduler/teardown-plan.ts). */
  private teardown(plan: TeardownPlan, drainTimeoutMs: number, label: string, haltReason: string): Promise<void> {
    const { ctx, executor, trigger, reconcile, coordinationEvents, reactions, execution, leader, instances, config } =
      this.services;
    let halted: Promise<unknown> | undefined;
    const actions: TeardownActions = {
      'halt-items': () => {
        halted = executor.halt(haltReason, drainTimeoutMs);
      },
      'halt-new-work': () => {
        trigger.stop();
        reconcile.stop();
        coordinationEvents.stop();
      },
      'drain-items': () => halted ?? executor.stop(drainTimeoutMs),
      'stop-reactions': () => reactions.close(),
      'remove-running-markers': () => execution.clearOwnRunningInfo(config.load().shardingTotalCount),
      'remove-leader-node': () => leader.removeLeader(),
      'remove-instance-node': () => instances.removeInstance(),
      'close-cache': () => ctx.storage.closeCache(),
      'close-alerts': () => ctx.plugins.close(),
    };
    return runTeardown(plan, actions, {
      sessionTimeoutMs: ctx.connection.sessionTimeoutMs,
      logger: ctx.logger,
      label,
      connected: () => ctx.connection.isConnected(),
    });
  }

  /** Stopped by an operator's deletion of our instance node, then the config node went: the job was removed. */
  private retellStop(reason: string): void {
    if (stopOf(this.lifecycle.current)?.by !== 'operator') return;
    this.lifecycle.move({ type: 'retell-stop', reason });
    this.ctx.logger.log(`${reason} after it stopped here`);
  }

  /** Fires the job now on every live instance (job/trigger/trigger-all-instances.ts); resolves with how many. */
  async triggerAllInstances(jobParameter?: string): Promise<number> {
    return (await this.services.triggerAll(jobParameter)).length;
  }

  status(): JobStatus {
    const { sharding, config, leader, executor, trigger } = this.services;
    const state = this.lifecycle.current;
    const registered = isRegistered(state);
    const connected = this.ctx.connection.isConnected();
    const shardingItems = registered
      ? sharding.getShardingItems(this.ctx.instanceId, config.load().shardingTotalCount)
      : [];
    const lastCompletions: Record<number, ItemCompletion> = {};
    for (const item of shardingItems) {
      const completion = this.record.completions?.get(item);
      if (completion)
        lastCompletions[item] = {
          completeTime: new Date(completion.completeMs),
          success: completion.success,
          ...(completion.failureMessage === undefined ? {} : { failureMessage: completion.failureMessage }),
        };
    }
    const stop = stopOf(state);
    return {
      jobName: this.jobName,
      instanceId: this.ctx.instanceId,
      registered,
      connected,
      // Disconnected, the leader node may be gone with our session any moment: not claimed.
      isLeader: registered && connected && leader.isLeader(),
      shardingItems,
      runningItems: executor.runningItems(),
      firing: executor.isFiring,
      nextFireTime: trigger.isRunning ? trigger.nextFireTime() : undefined,
      ...(stop ? { shutdown: { ...stop } } : {}),
      health: { ...healthOf(state) },
      lastFireTime: this.record.lastFireMs === undefined ? undefined : new Date(this.record.lastFireMs),
      lastCompletions,
    };
  }
}

/**
 * What status() tells of the firings here: times kept as numbers (a Date is 96 bytes), made Dates when asked; the
 * completions' map made at the first completion. One observer, not a closure per event (issue 32).
 */
class FiringRecord implements ExecutionObserver {
  lastFireMs: number | undefined;
  completions: Map<number, { completeMs: number; success: boolean; failureMessage?: string }> | undefined;

  'firing-started'(firing: ExecutionEventMap['firing-started']): void {
    this.lastFireMs = firing.startTime.getTime();
  }

  'item-completed'(item: ExecutionEventMap['item-completed']): void {
    (this.completions ??= new Map()).set(
      item.shardingItem,
      item.success
        ? { completeMs: item.completeTime.getTime(), success: true }
        : { completeMs: item.completeTime.getTime(), success: false, failureMessage: describeError(item.failureCause) },
    );
  }
}
