import type { ShardingContext } from '../../interfaces/sharding-context.interface.js';
import type { JobErrorHandler } from '../../interfaces/sharded-job-options.interface.js';
import { INSTANCE_DELIMITER } from '../../elastic-job.constants.js';
import type { ConfigService } from '../config/config.service.js';
import type { JobConfiguration } from '../config/job-configuration.js';
import type { JobContext } from '../job-context.js';
import { parseShardingItemParameters } from '../sharding/sharding-item-parameters.js';
import type { ShardingService } from '../sharding/sharding.service.js';
import type { FailoverService } from '../failover/failover.service.js';
import type { ExecutionService } from './execution.service.js';

export type JobHandler = (context: ShardingContext) => unknown;

/** How long before a cron instant a firing starts its coordination (one ZooKeeper write, usually ~1 ms). */
export const PREPARE_AHEAD_MS = 25;

function describeFailure(error: unknown): string {
  if (error instanceof AggregateError) return `${error.message}: ${error.errors.map(describeFailure).join('; ')}`;
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/**
 * One firing of one job on this instance (ElasticJob's ElasticJobExecutor, docs/reference/elasticjob.md §5.1):
 * suspended → skip and remember the misfire; reshard if necessary; take my items minus disabled; if any still
 * runs, flag misfire and skip; write running markers; run every item concurrently; remove the markers; then
 * run the misfired items once.
 */
export class JobExecutor {
  /** Controllers of the items running now: aborted on session loss or shutdown timeout. */
  private readonly running = new Map<number, AbortController>();
  private firing: Promise<void> | undefined;
  /** A firing missed locally (overlap, no connection) without a ZooKeeper flag to show for it. */
  private localMisfire = false;
  /** A manual trigger that arrived during a firing: run once more when it ends (ElasticJob drops it). */
  private pendingTrigger = false;
  private stopped = false;

  constructor(
    private readonly ctx: JobContext,
    private readonly config: ConfigService,
    private readonly sharding: ShardingService,
    private readonly execution: ExecutionService,
    private readonly failover: FailoverService,
    private readonly handler: JobHandler,
  ) {}

  get isFiring(): boolean {
    return this.firing !== undefined;
  }

  runningItems(): number[] {
    return [...this.running.keys()];
  }

  /**
   * Called by the cron trigger, a little before `scheduledAt` (PREPARE_AHEAD_MS): the coordination of the firing
   * (sharding check, running markers) is done by then, and the items start at the instant. Never throws.
   */
  fire(scheduledAt?: number): void {
    if (this.stopped) return;
    if (this.firing && scheduledAt !== undefined && Date.now() < scheduledAt) {
      // Called early: the previous firing may still end before the instant.
      setTimeout(() => this.fire(scheduledAt), scheduledAt - Date.now());
      return;
    }
    if (this.firing) {
      void this.onOverlap();
      return;
    }
    this.firing = this.runFiring(scheduledAt)
      .catch((error: unknown) => this.ctx.logger.error(`firing failed: ${describeFailure(error)}`))
      .finally(() => {
        this.firing = undefined;
        if (this.pendingTrigger && !this.stopped) {
          this.pendingTrigger = false;
          this.fire();
        }
      });
  }

  /**
   * Connected again after firings were skipped: run the catch-up now rather than after the next firing, so a
   * short disconnect (a ZooKeeper server stopping, a leader election in the ensemble) delays work, not drops it.
   */
  catchUpAfterReconnect(): void {
    if (this.stopped || this.firing || !this.localMisfire || !this.config.load().misfire) return;
    this.localMisfire = false;
    this.ctx.logger.log('connected again: running the firing skipped while disconnected');
    this.fire();
  }

  /** A manual trigger (`trigger/{instanceId}`): fire now, or once after the current firing. */
  trigger(): void {
    if (this.stopped) return;
    if (this.firing) {
      this.pendingTrigger = true;
      this.ctx.logger.log('triggered while a firing runs: queued, it runs once after');
      return;
    }
    this.ctx.logger.log('triggered');
    this.fire();
  }

  /** Stop starting firings; resolves when the current one is over, or false at `timeoutMs` (then aborts items). */
  async stop(timeoutMs: number): Promise<boolean> {
    this.stopped = true;
    const current = this.firing;
    if (!current) return true;
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([current.then(() => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), timeoutMs)))]);
    clearTimeout(timer);
    if (!finished) {
      this.ctx.logger.warn(`items [${this.runningItems().join(',')}] still running after ${timeoutMs} ms of shutdown: aborting their signal`);
      this.abortAll('shutdown timeout reached');
    }
    return finished;
  }

  abortAll(reason: string): void {
    for (const controller of this.running.values()) controller.abort(new Error(reason));
  }

  private async onOverlap(): Promise<void> {
    // The previous firing is still running here: this one is a misfire (ElasticJob's misfireIfRunning).
    const config = this.config.load();
    this.localMisfire = true;
    this.ctx.logger.log('the previous firing is still running: this one is a misfire');
    if (!config.monitorExecution || !this.ctx.registry.isConnected()) return;
    const items = this.sharding.getLocalShardingItems(config.shardingTotalCount);
    try {
      await this.execution.setMisfire(items);
    } catch (error) {
      this.ctx.logger.warn(`could not flag misfire: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async runFiring(scheduledAt?: number): Promise<void> {
    if (!this.ctx.registry.isConnected()) {
      this.localMisfire = true;
      this.ctx.logger.warn('not connected to ZooKeeper: firing skipped (misfire)');
      return;
    }
    let config = this.config.load();
    await this.checkClockDifference(config);
    if (config.monitorExecution) await this.execution.removeStaleOwnMarkers(config.shardingTotalCount);
    if (config.failover) {
      // ElasticJob: a firing that finds items taken over by this instance runs only those.
      const taken = this.failover.getLocalFailoverItems(config.shardingTotalCount);
      if (taken.length > 0) {
        this.ctx.logger.log(`running taken-over items [${taken.join(',')}]`);
        await this.execute(taken, config, true);
        await this.claimFailover(config);
        return;
      }
    }
    await this.sharding.shardingIfNecessary(config);
    config = this.config.load();
    const items = this.localItems(config);
    if (config.monitorExecution && (await this.execution.misfireIfHasRunningItems(items))) {
      this.ctx.logger.log(`items [${this.execution.runningItems(items).join(',')}] are still running: misfire, they run after completion`);
      return;
    }
    await this.execute(items, config, false, scheduledAt);
    // ElasticJob: while misfire && !needSharding && misfired items → clear and run again.
    while (!this.stopped && config.misfire && !this.sharding.isNeedSharding() && this.ctx.registry.isConnected()) {
      config = this.config.load();
      const current = this.localItems(config);
      const misfired = config.monitorExecution ? this.execution.getMisfiredItems(current) : [];
      if (misfired.length === 0 && !this.localMisfire) break;
      const rerun = misfired.length > 0 ? misfired : current;
      this.localMisfire = false;
      await this.execution.clearMisfire(misfired);
      this.ctx.logger.log(`running misfired items [${rerun.join(',')}]`);
      await this.execute(rerun, config);
    }
    if (!config.misfire) this.localMisfire = false;
    await this.claimFailover(config);
  }

  /**
   * ElasticJob's maxTimeDiffSeconds: compare our clock with ZooKeeper's (the mtime of a node we just wrote).
   * Too far apart is logged as an error; the firing goes on, as in ElasticJob. Costs one write and one read.
   */
  private async checkClockDifference(config: JobConfiguration): Promise<void> {
    if (config.maxTimeDiffSeconds < 0) return;
    const path = this.ctx.paths.systemTimeCurrent;
    await this.ctx.registry.persist(path, Buffer.alloc(0));
    const node = await this.ctx.registry.getData(path);
    if (!node) return;
    const difference = Math.abs(Date.now() - node.stat.mtime);
    if (difference > config.maxTimeDiffSeconds * 1000) {
      this.ctx.logger.error(
        `this machine's clock is ${difference} ms away from ZooKeeper's, more than maxTimeDiffSeconds (${config.maxTimeDiffSeconds} s): fix its time synchronisation`,
      );
    }
  }

  /** Idle peers claim crashed items (ElasticJob's failoverIfNecessary); a claim fires right away. */
  async failoverIfNecessary(): Promise<void> {
    if (this.stopped || this.firing || this.running.size > 0) return;
    const config = this.config.load();
    if (!config.failover) return;
    if ((await this.failover.claim(() => !this.firing && this.running.size === 0)) !== undefined) this.trigger();
  }

  private async claimFailover(config: JobConfiguration): Promise<void> {
    if (this.stopped || !config.failover || !this.ctx.registry.isConnected()) return;
    // At the end of a firing: the claimed item runs as soon as this firing is over.
    if ((await this.failover.claim(() => this.running.size === 0)) !== undefined) this.pendingTrigger = true;
  }

  private localItems(config: JobConfiguration): number[] {
    const items = this.sharding
      .getLocalShardingItems(config.shardingTotalCount)
      .filter((item) => !this.ctx.storage.has(this.ctx.paths.disabled(item)));
    if (!config.failover) return items;
    const takenOff = new Set(this.failover.getLocalTakeOffItems(items));
    return items.filter((item) => !takenOff.has(item));
  }

  private async execute(wanted: number[], config: JobConfiguration, failoverRun = false, startAt?: number): Promise<void> {
    if (wanted.length === 0) return;
    const items = await this.execution.registerJobBegin(wanted, config);
    if (items.length === 0) return;
    // Prepared ahead of the cron instant: start the items on it, not before.
    // (Timers may wake a millisecond early: loop until the instant has come.)
    while (startAt !== undefined && startAt > Date.now()) await new Promise((resolve) => setTimeout(resolve, startAt - Date.now()));
    const parameters = parseShardingItemParameters(config.shardingItemParameters);
    const parameterOf = (item: number): string | undefined => (typeof parameters === 'string' ? undefined : parameters.get(item));
    const taskId = [this.ctx.jobName, items.join(','), 'READY', this.ctx.instanceId].join(INSTANCE_DELIMITER);
    const handler = this.errorHandler(config);
    const failures: unknown[] = [];
    try {
      await Promise.all(
        items.map(async (item) => {
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
          try {
            await this.handler(context);
          } catch (error) {
            try {
              await handler.handleException(this.ctx.jobName, error, context);
            } catch (handlerError) {
              failures.push(handlerError);
            }
          } finally {
            this.running.delete(item);
          }
        }),
      );
    } finally {
      await this.execution.registerJobCompleted(items, config).catch((error: unknown) =>
        this.ctx.logger.warn(`could not remove running markers: ${error instanceof Error ? error.message : String(error)}`),
      );
      if (failoverRun) {
        await this.failover.updateFailoverComplete(items).catch((error: unknown) =>
          this.ctx.logger.warn(`could not remove failover markers: ${error instanceof Error ? error.message : String(error)}`),
        );
      }
    }
    if (failures.length > 0) {
      // THROW (or a custom handler that threw): the firing fails; it is logged by fire(), the app goes on.
      throw failures.length === 1 ? failures[0] : new AggregateError(failures, `${failures.length} items failed`);
    }
  }

  /** The configured handler by name; a name this job cannot resolve (never after validation) logs, as LOG does. */
  private errorHandler(config: JobConfiguration): JobErrorHandler {
    return this.ctx.plugins.errorHandler(config.jobErrorHandlerType) ?? this.ctx.plugins.errorHandler('LOG')!;
  }
}
