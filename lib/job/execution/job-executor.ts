import type { ShardingContext } from '../../interfaces/sharding-context.interface.js';
import type { JobErrorHandler } from '../../interfaces/sharded-job-options.interface.js';
import type { ConfigService } from '../config/config.service.js';
import type { JobConfiguration } from '../config/job-configuration.js';
import type { JobContext } from '../job-context.js';
import { parseShardingItemParameters } from '../sharding/sharding-item-parameters.js';
import { buildTaskId } from '../paths.js';
import type { ShardingService } from '../sharding/sharding.service.js';
import type { FailoverService } from '../failover/failover.service.js';
import type { ExecutionService } from './execution.service.js';
import { ExecutionEvents, type FiringHooks } from './execution-events.js';
import { IDLE, type FiringSource, type FiringState, type QueuedFiring } from './firing-state.js';
import type { JobItemExecutor } from './item-executor.js';
import type { ItemInterceptor } from '../../interfaces/item-interceptor.interface.js';
import { describeError } from '../../errors/elastic-job.errors.js';
import { describeItems } from '../../util/item-list.js';
import type { ShardingContexts } from '../../interfaces/job-listener.interface.js';
import { toExecutionSource } from '../events/job-event-publisher.js';
import { mapBounded } from '../../registry/request-limits.js';

/** How long before a cron instant a firing starts its coordination (one ZooKeeper write, usually ~1 ms). */
export const PREPARE_AHEAD_MS = 25;

function describeFailure(error: unknown): string {
  if (error instanceof AggregateError) return `${error.message}: ${error.errors.map(describeFailure).join('; ')}`;
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/**
 * The firings of one job on this instance (ElasticJob's ElasticJobExecutor, docs/reference/elasticjob.md §5.1):
 * suspended → skip and remember the misfire; reshard if necessary; take my items minus disabled; if any still
 * runs, flag misfire and skip; write running markers; run every item concurrently through the job type's item
 * executor; remove the markers; then run the misfired items once.
 *
 * Where it stands is one field, `state` (see firing-state.ts). Around the items: awaited firing hooks (the seam of
 * job listeners) and execution events (never awaited).
 */
export class JobExecutor {
  /** Controllers of the items running now: aborted on session loss or shutdown timeout. */
  private readonly running = new Map<number, AbortController>();
  private state: FiringState = IDLE;
  /**
   * Set when the session is lost, cleared once this instance has re-registered on the new one (rejoined()).
   * Beside `state`, not in it: a firing may be running when the session goes. Until then no item starts, as
   * ElasticJob pauses its jobs on LOST and resumes them after re-registering (RegistryCenterConnectionStateListener
   * in ElasticJob's source): the cache may still show as ours items a peer took over when our instance node went.
   */
  private rejoining = false;
  /** When the overlap line was last logged at log level, and how many since went to debug. */
  private overlapLog = { at: -Infinity, suppressed: 0 };
  private readonly hooks = new Set<FiringHooks>();
  /** The job parameter the pending manual trigger carries, taken by the TRIGGER firing that starts next. */
  private triggerParameter: string | undefined;
  readonly events: ExecutionEvents;

  constructor(
    private readonly ctx: JobContext,
    private readonly config: ConfigService,
    private readonly sharding: ShardingService,
    private readonly execution: ExecutionService,
    private readonly failover: FailoverService,
    private readonly itemExecutor: JobItemExecutor,
    /** The app's item interceptors, outermost first (shared, read at each item). */
    private readonly interceptors: readonly ItemInterceptor[] = [],
    /** At most this many items at once; undefined: all of a firing at once. */
    private readonly maxConcurrentItems?: number,
  ) {
    this.events = new ExecutionEvents(ctx.logger);
  }

  get firingState(): FiringState {
    return this.state;
  }

  /** A firing runs (or, after stop(), is still draining). */
  get isFiring(): boolean {
    return this.state.phase === 'FIRING' || (this.state.phase === 'STOPPED' && this.state.draining !== undefined);
  }

  private get stopped(): boolean {
    return this.state.phase === 'STOPPED';
  }

  runningItems(): number[] {
    return [...this.running.keys()];
  }

  /** Hooks awaited around every firing that runs items. Returns the call that removes them. */
  addHooks(hooks: FiringHooks): () => void {
    this.hooks.add(hooks);
    return () => this.hooks.delete(hooks);
  }

  /**
   * Called by the cron trigger, a little before `scheduledAt` (PREPARE_AHEAD_MS): the coordination of the firing
   * (sharding check, running markers) is done by then, and the items start at the instant. Never throws.
   */
  fire(scheduledAt?: number): void {
    const state = this.state;
    if (state.phase === 'STOPPED') return;
    if (state.phase === 'FIRING' && scheduledAt !== undefined && Date.now() < scheduledAt) {
      // Called early: the previous firing may still end before the instant.
      setTimeout(() => this.fire(scheduledAt), scheduledAt - Date.now());
      return;
    }
    if (state.phase === 'FIRING') {
      void this.onOverlap();
      return;
    }
    this.start('CRON', scheduledAt);
  }

  /**
   * Connected again after firings were skipped: run the catch-up now rather than after the next firing, so a
   * short disconnect (a ZooKeeper server stopping, a leader election in the ensemble) delays work, not drops it.
   */
  catchUpAfterReconnect(): void {
    if (this.state.phase !== 'IDLE' || !this.state.missed || !this.config.load().misfire) return;
    this.setMissed(false);
    this.ctx.logger.log('connected again: running the firing skipped while disconnected');
    this.start('CATCH_UP');
  }

  /** The session is lost: running items' signals abort, and no item starts until rejoined(). */
  sessionLost(): void {
    this.rejoining = true;
    this.abortAll('ZooKeeper session lost');
  }

  /** Re-registered on a new session: items start again, beginning with the firing skipped meanwhile. */
  rejoined(): void {
    this.rejoining = false;
    this.catchUpAfterReconnect();
  }

  /**
   * A manual trigger (`trigger/{instanceId}`): fire now, or once after the current firing. `jobParameter` replaces
   * the job's for that run (triggers queued behind a firing collapse into one run: the last parameter wins).
   */
  trigger(jobParameter?: string): void {
    this.triggerParameter = jobParameter;
    this.request('TRIGGER');
  }

  /** Stop starting firings; resolves when the current one is over, or false at `timeoutMs` (then aborts items). */
  async stop(timeoutMs: number): Promise<boolean> {
    const state = this.state;
    const current = state.phase === 'FIRING' ? state.done : state.phase === 'STOPPED' ? state.draining : undefined;
    this.state = state.phase === 'STOPPED' ? { ...state, draining: current } : { phase: 'STOPPED', draining: current };
    if (!current) return true;
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      current.then(() => true),
      new Promise<false>((r) => (timer = setTimeout(() => r(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (!finished) {
      this.ctx.logger.warn(
        `items [${describeItems(this.runningItems())}] still running after ${timeoutMs} ms of shutdown: aborting their ` +
          `signal`,
      );
      this.abortAll('shutdown timeout reached');
    }
    return finished;
  }

  /**
   * Stops at once and for good, before anything else happens: items already running have their signal aborted
   * and items of the current firing that have not started yet are not started (their markers are removed). For an
   * operator's shutdown, after which peers may take the items over. Resolves as stop() does.
   */
  halt(reason: string, timeoutMs: number): Promise<boolean> {
    const stopped = this.stop(timeoutMs); // STOPPED synchronously, before this returns
    if (this.state.phase === 'STOPPED') this.state = { ...this.state, halted: reason };
    this.abortAll(reason);
    return stopped;
  }

  abortAll(reason: string): void {
    for (const controller of this.running.values()) controller.abort(new Error(reason));
  }

  // ---------------------------------------------------------------- state transitions

  /** A firing asked for now: started when idle, queued (once) behind the current one otherwise. */
  private request(source: QueuedFiring): void {
    const state = this.state;
    if (state.phase === 'STOPPED') return;
    if (state.phase === 'FIRING') {
      if (state.queued === undefined) this.state = { ...state, queued: source };
      this.ctx.logger.log(
        `${source === 'TRIGGER' ? 'triggered' : 'failover items claimed'} while a firing runs: queued, it runs once ` +
          `after`,
      );
      return;
    }
    this.ctx.logger.log(source === 'TRIGGER' ? 'triggered' : 'failover items claimed: firing them');
    this.start(source);
  }

  /** IDLE → FIRING. The state is set before the firing's first step runs, so that step sees it. */
  private start(source: FiringSource, scheduledAt?: number): void {
    if (this.state.phase !== 'IDLE') return;
    let settle!: () => void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    this.state = { phase: 'FIRING', source, done, missed: this.state.missed, queued: undefined };
    const jobParameter = source === 'TRIGGER' ? this.triggerParameter : undefined;
    if (source === 'TRIGGER') this.triggerParameter = undefined;
    void this.runFiring(source, scheduledAt, jobParameter)
      .catch((error: unknown) => this.ctx.logger.error(`firing failed: ${describeFailure(error)}`))
      .finally(() => {
        this.onFiringEnded();
        settle();
      });
  }

  /** FIRING → IDLE, then the queued firing if any; STOPPED stays STOPPED, with nothing left to drain. */
  private onFiringEnded(): void {
    const state = this.state;
    if (state.phase === 'STOPPED') {
      this.state = { ...state, draining: undefined };
      return;
    }
    if (state.phase !== 'FIRING') return;
    this.state = { phase: 'IDLE', missed: state.missed };
    if (state.queued !== undefined) this.start(state.queued);
  }

  private get missed(): boolean {
    return this.state.phase === 'STOPPED' ? false : this.state.missed;
  }

  private setMissed(missed: boolean): void {
    const state = this.state;
    if (state.phase !== 'STOPPED' && state.missed !== missed) this.state = { ...state, missed };
  }

  private queue(queued: QueuedFiring): void {
    const state = this.state;
    if (state.phase === 'FIRING' && state.queued === undefined) this.state = { ...state, queued };
  }

  // ---------------------------------------------------------------- one firing

  private async onOverlap(): Promise<void> {
    // The previous firing is still running here: this one is a misfire (ElasticJob's misfireIfRunning).
    const config = this.config.load();
    this.setMissed(true);
    this.logOverlap();
    const items = this.sharding.getLocalShardingItems(config.shardingTotalCount);
    this.events.emit('firing-skipped', { ...this.eventBase('CRON'), reason: 'previous-firing-running', items });
    if (!config.monitorExecution || !this.ctx.connection.isConnected()) return;
    try {
      await this.execution.setMisfire(items);
      if (items.length > 0) this.ctx.events.publish('misfire.flagged', { items });
    } catch (error) {
      this.ctx.logger.warn(`could not flag misfire: ${describeError(error)}`);
    }
  }

  /**
   * A job slower than its cron overlaps at every instant: said at most once a minute (with how many since), the
   * rest at debug level.
   */
  private logOverlap(): void {
    const now = Date.now();
    if (now - this.overlapLog.at >= 60_000) {
      const since = this.overlapLog.suppressed > 0 ? ` (${this.overlapLog.suppressed} more in the last minute)` : '';
      this.ctx.logger.log(`the previous firing is still running: this one is a misfire${since}`);
      this.overlapLog = { at: now, suppressed: 0 };
    } else {
      this.overlapLog.suppressed++;
      this.ctx.logger.debug('the previous firing is still running: this one is a misfire');
    }
  }

  private async runFiring(source: FiringSource, scheduledAt?: number, jobParameter?: string): Promise<void> {
    if (!this.ctx.connection.isConnected()) {
      this.setMissed(true);
      this.ctx.logger.warn('not connected to ZooKeeper: firing skipped (misfire)');
      this.events.emit('firing-skipped', { ...this.eventBase(source), reason: 'not-connected', items: [] });
      return;
    }
    if (this.rejoining) {
      this.setMissed(true);
      this.ctx.logger.warn('connected with a new session, not registered on it yet: firing skipped (misfire)');
      this.events.emit('firing-skipped', { ...this.eventBase(source), reason: 'rejoining', items: [] });
      return;
    }
    // A trigger's job parameter replaces the job's for this firing (its items and listeners see it).
    const withParameter = (loaded: JobConfiguration): JobConfiguration =>
      jobParameter === undefined ? loaded : { ...loaded, jobParameter };
    let config = withParameter(this.config.load());
    await this.checkClockDifference(config);
    if (config.monitorExecution) await this.execution.removeStaleOwnMarkers(config.shardingTotalCount);
    if (config.failover) {
      // ElasticJob: a firing that finds items taken over by this instance runs only those.
      const taken = this.failover.getLocalFailoverItems(config.shardingTotalCount);
      if (taken.length > 0) {
        this.ctx.logger.log(`running taken-over items [${describeItems(taken)}]`);
        await this.withHooks(taken, config, 'FAILOVER', async () => {
          await this.execute(taken, config, 'FAILOVER', true);
          await this.claimFailover(config);
        });
        return;
      }
    }
    await this.sharding.shardingIfNecessary(config);
    config = withParameter(this.config.load());
    const items = this.localItems(config);
    if (config.monitorExecution && (await this.execution.misfireIfHasRunningItems(items))) {
      const stillRunning = this.execution.runningItems(items);
      this.ctx.logger.log(
        `items [${describeItems(stillRunning)}] are still running: misfire, they run after completion`,
      );
      this.ctx.events.publish('misfire.flagged', { items });
      this.events.emit('firing-skipped', {
        ...this.eventBase(source),
        reason: 'items-still-running',
        items: stillRunning,
      });
      return;
    }
    if (items.length === 0)
      this.events.emit('firing-skipped', { ...this.eventBase(source), reason: 'no-items', items: [] });
    // ElasticJob's order: items, misfired items, a failover claim, then the after listeners.
    await this.withHooks(items, config, source, async () => {
      await this.execute(items, config, source, false, scheduledAt);
      config = await this.runMisfired(config);
      if (!config.misfire) this.setMissed(false);
      await this.claimFailover(config);
    });
  }

  /** ElasticJob: while misfire && !needSharding && misfired items → clear and run again. Returns the last config. */
  private async runMisfired(config: JobConfiguration): Promise<JobConfiguration> {
    while (
      !this.stopped &&
      config.misfire &&
      !this.sharding.isNeedSharding() &&
      this.ctx.connection.isConnected() &&
      !this.rejoining
    ) {
      config = this.config.load();
      const current = this.localItems(config);
      const misfired = config.monitorExecution ? this.execution.getMisfiredItems(current) : [];
      if (misfired.length === 0 && !this.missed) break;
      const rerun = misfired.length > 0 ? misfired : current;
      this.setMissed(false);
      await this.execution.clearMisfire(misfired);
      this.ctx.logger.log(`running misfired items [${describeItems(rerun)}]`);
      await this.execute(rerun, config, 'CATCH_UP');
    }
    return config;
  }

  /**
   * Runs `run` (the items of a firing and its catch-up runs) between the firing hooks, as ElasticJob calls job
   * listeners: once per firing, on every instance, also with no item; the after hooks also when the run throws.
   */
  private async withHooks(
    items: number[],
    config: JobConfiguration,
    source: FiringSource,
    run: () => Promise<void>,
  ): Promise<void> {
    if (this.hooks.size === 0) return run();
    const taskId = buildTaskId(this.ctx.jobName, items, this.ctx.instanceId);
    const contexts = this.shardingContexts(taskId, items, config, source);
    await this.runHooks('beforeFiring', contexts);
    let success = false;
    try {
      // The before hooks may have waited (a distribute-once round): stopped meanwhile, nothing starts.
      if (this.stopped) this.ctx.logger.log('stopped while the job listeners ran: the firing starts no item');
      else await run();
      success = !this.stopped;
    } finally {
      await this.runHooks('afterFiring', contexts, { success });
    }
  }

  /**
   * ElasticJob's maxTimeDiffSeconds: compare our clock with ZooKeeper's (the mtime of a node we just wrote).
   * Too far apart is logged as an error; the firing goes on, as in ElasticJob. Costs one write and one read.
   */
  private async checkClockDifference(config: JobConfiguration): Promise<void> {
    if (config.maxTimeDiffSeconds < 0) return;
    const path = this.ctx.paths.systemTimeCurrent;
    await this.ctx.storage.replace(path, '');
    const node = await this.ctx.storage.direct.node(path);
    if (!node) return;
    const difference = Math.abs(Date.now() - node.stat.mtime);
    if (difference > config.maxTimeDiffSeconds * 1000) {
      this.ctx.logger.error(
        `this machine's clock is ${difference} ms away from ZooKeeper's, more than maxTimeDiffSeconds ` +
          `(${config.maxTimeDiffSeconds} s): fix its time synchronisation`,
      );
    }
  }

  /** Idle peers claim crashed items (ElasticJob's failoverIfNecessary); a claim fires right away. */
  async failoverIfNecessary(): Promise<void> {
    if (this.stopped || this.isFiring || this.running.size > 0) return;
    const config = this.config.load();
    if (!config.failover) return;
    if ((await this.failover.claim(() => !this.isFiring && this.running.size === 0)) !== undefined)
      this.request('FAILOVER');
  }

  private async claimFailover(config: JobConfiguration): Promise<void> {
    if (this.stopped || !config.failover || !this.ctx.connection.isConnected()) return;
    // At the end of a firing: the claimed item runs as soon as this firing is over.
    if ((await this.failover.claim(() => this.running.size === 0)) !== undefined) this.queue('FAILOVER');
  }

  private localItems(config: JobConfiguration): number[] {
    const items = this.sharding
      .getLocalShardingItems(config.shardingTotalCount)
      .filter((item) => !this.ctx.storage.cached.has(this.ctx.paths.disabled(item)));
    if (!config.failover) return items;
    const takenOff = new Set(this.failover.getLocalTakeOffItems(items));
    return items.filter((item) => !takenOff.has(item));
  }

  /**
   * Runs `wanted` (those of them whose running marker we write) through the item executor, between the firing
   * hooks, telling the execution events. `source` is told in the events; `failoverRun` removes the failover
   * markers of the items afterwards.
   */
  private async execute(
    wanted: number[],
    config: JobConfiguration,
    source: FiringSource,
    failoverRun = false,
    startAt?: number,
  ): Promise<void> {
    if (wanted.length === 0) return;
    const items = await this.execution.registerJobBegin(wanted, config);
    if (items.length === 0) {
      this.events.emit('firing-skipped', { ...this.eventBase(source), reason: 'items-still-running', items: wanted });
      return;
    }
    // Prepared ahead of the cron instant: start the items on it, not before.
    // (Timers may wake a millisecond early: loop until the instant has come.)
    while (startAt !== undefined && startAt > Date.now())
      await new Promise((resolve) => setTimeout(resolve, startAt - Date.now()));
    const parameters = parseShardingItemParameters(config.shardingItemParameters);
    const parameterOf = (item: number): string | undefined =>
      typeof parameters === 'string' ? undefined : parameters.get(item);
    const taskId = buildTaskId(this.ctx.jobName, items, this.ctx.instanceId);
    const handler = this.errorHandler(config);
    const failures: unknown[] = [];
    const started = { ...this.eventBase(source), taskId, items, startTime: new Date() };
    let success = true;
    const refusal = this.mayStartItems();
    if (refusal !== undefined) {
      if (this.state.phase !== 'STOPPED') this.setMissed(true);
      this.events.emit('firing-skipped', {
        ...this.eventBase(source),
        reason: this.rejoining ? 'rejoining' : 'halted',
        items,
      });
      this.ctx.logger.warn(`items [${describeItems(items)}] not started: ${refusal}`);
      await this.execution
        .registerJobCompleted(items, config)
        .catch((error: unknown) => this.ctx.logger.warn(`could not remove running markers: ${describeError(error)}`));
      return;
    }
    this.ctx.logger.debug(`${source} firing: items [${describeItems(items)}] starting`);
    try {
      this.events.emit('firing-started', started);
      await mapBounded(
        items,
        async (item) => {
          // An item waiting its turn (maxConcurrentItems) does not start once an operator halted the job here, or
          // the session was lost meanwhile (a peer may own it by now).
          const refusedNow = this.mayStartItems();
          if (refusedNow !== undefined) {
            this.ctx.logger.warn(`item ${item} not started: ${refusedNow}`);
            return;
          }
          const controller = new AbortController();
          this.running.set(item, controller);
          const context: ShardingContext = {
            jobName: this.ctx.jobName,
            taskId,
            shardingTotalCount: config.shardingTotalCount,
            jobParameter: config.jobParameter,
            shardingItem: item,
            shardingParameter: parameterOf(item),
            signal: controller.signal,
          };
          const itemStart = {
            ...this.eventBase(source),
            taskId,
            shardingItem: item,
            startTime: new Date(),
            ...(startAt === undefined ? {} : { scheduledTime: new Date(startAt) }),
          };
          this.events.emit('item-started', itemStart);
          try {
            await this.runItem(context);
            this.events.emit('item-completed', { ...itemStart, completeTime: new Date(), success: true });
          } catch (error) {
            success = false;
            this.events.emit('item-completed', {
              ...itemStart,
              completeTime: new Date(),
              success: false,
              failureCause: error,
            });
            try {
              await handler.handleException(this.ctx.jobName, error, context);
            } catch (handlerError) {
              failures.push(handlerError);
            }
          } finally {
            this.running.delete(item);
          }
        },
        this.maxConcurrentItems ?? items.length,
      );
    } finally {
      await this.execution
        .registerJobCompleted(items, config)
        .catch((error: unknown) => this.ctx.logger.warn(`could not remove running markers: ${describeError(error)}`));
      if (failoverRun) {
        await this.failover
          .updateFailoverComplete(items)
          .catch((error: unknown) =>
            this.ctx.logger.warn(`could not remove failover markers: ${describeError(error)}`),
          );
      }
      const completed = { ...started, completeTime: new Date(), success };
      this.ctx.logger.debug(
        `${source} firing: items [${describeItems(items)}] finished in ` +
          `${completed.completeTime.getTime() - started.startTime.getTime()} ms${success ? '' : ', some failed'}`,
      );
      this.events.emit('firing-completed', completed);
    }
    if (failures.length > 0) {
      // THROW (or a custom handler that threw): the firing fails; it is logged by fire(), the app goes on.
      throw failures.length === 1 ? failures[0] : new AggregateError(failures, `${failures.length} items failed`);
    }
  }

  /**
   * Undefined when the firing may start its items now; otherwise why not: an operator's shutdown, or a session
   * lost since the firing read its items (a peer may own them by now; caught up after rejoining).
   */
  private mayStartItems(): string | undefined {
    const state = this.state;
    if (state.phase === 'STOPPED' && state.halted !== undefined) return state.halted;
    if (this.rejoining) return 'the ZooKeeper session was lost since the firing read its items';
    return undefined;
  }

  private eventBase(source: FiringSource): { jobName: string; instanceId: string; source: FiringSource } {
    return { jobName: this.ctx.jobName, instanceId: this.ctx.instanceId, source };
  }

  /** The item through the interceptors, outermost first, then the job type's item executor. */
  private runItem(context: ShardingContext): Promise<unknown> {
    const call = (index: number): Promise<unknown> => {
      const interceptor = this.interceptors[index];
      if (!interceptor) return this.itemExecutor.execute(context);
      return Promise.resolve().then(() => interceptor(context, () => call(index + 1)));
    };
    return call(0);
  }

  /** What job listeners are told about a run of items. */
  private shardingContexts(
    taskId: string,
    items: number[],
    config: JobConfiguration,
    source: FiringSource,
  ): ShardingContexts {
    const parameters = parseShardingItemParameters(config.shardingItemParameters);
    return {
      taskId,
      jobName: this.ctx.jobName,
      shardingTotalCount: config.shardingTotalCount,
      jobParameter: config.jobParameter,
      shardingItemParameters: Object.fromEntries(
        items.map((item) => [item, (typeof parameters === 'string' ? undefined : parameters.get(item)) ?? '']),
      ),
      shardingItems: items,
      source: toExecutionSource(source),
    };
  }

  /** Awaits each hook in turn; one that throws is logged and the firing goes on. */
  private async runHooks(
    name: 'beforeFiring' | 'afterFiring',
    contexts: ShardingContexts,
    outcome: { success: boolean } = { success: true },
  ): Promise<void> {
    for (const hooks of [...this.hooks]) {
      try {
        if (name === 'beforeFiring') await hooks.beforeFiring?.(contexts);
        else await hooks.afterFiring?.(contexts, outcome);
      } catch (error) {
        this.ctx.logger.warn(`${name} hook failed: ${describeError(error)}`);
      }
    }
  }

  /** The configured handler by name; a name this job cannot resolve (never after validation) logs, as LOG does. */
  private errorHandler(config: JobConfiguration): JobErrorHandler {
    return this.ctx.plugins.errorHandler(config.jobErrorHandlerType) ?? this.ctx.plugins.errorHandler('LOG')!;
  }
}
