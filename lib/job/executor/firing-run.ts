import { describeError } from '../../errors/elastic-job.errors.js';
import type { JobErrorHandler } from '../../interfaces/sharded-job-options.interface.js';
import { describeItems } from '../../util/item-list.js';
import { untilAfterThisInstant, untilInstant } from '../../util/after-this-instant.js';
import type { ConfigService } from '../config/config.service.js';
import type { JobConfiguration } from '../config/job-configuration.js';
import type { FailoverService } from '../failover/failover.service.js';
import type { JobContext } from '../context/job-context.js';
import { buildTaskId } from '../paths.js';
import type { ShardingService } from '../sharding/sharding.service.js';
import type { ExecutionService } from '../execution/execution.service.js';
import type { FiringHookRunner } from './firing-hooks.js';
import type { FiringMarkers } from './firing-markers.js';
import type { FiringReport } from './firing-report.js';
import type { FiringSource, QueuedFiring } from '../events/firing-state.js';
import type { DispatchOutcome, ItemDispatch } from './item-dispatch.js';

/** What a firing's steps read of, and ask of, the executor's state (job-executor.ts holds it). */
export interface FiringMachine {
  stopped(): boolean;
  rejoining(): boolean;
  firing(): boolean;
  missed(): boolean;
  setMissed(missed: boolean): void;
  /** One more firing after this one (a failover claim at its end). */
  queue(queued: QueuedFiring): void;
  /** A firing now, or queued behind the current one. */
  request(source: QueuedFiring): void;
  /** Why items may not start now (halted, rejoining), or undefined. */
  mayStartItems(): string | undefined;
}

/**
 * The steps of one firing (ElasticJob's ElasticJobExecutor.execute, docs/reference/elasticjob.md §5.1): not
 * connected or rejoining → skip and remember the misfire; failover items first; reshard if necessary; take my items
 * minus disabled and taken over; if any still runs, flag misfire and skip; run the items between the firing hooks;
 * then the misfired items once more, and a failover claim.
 */
export class FiringRun {
  /** When the current cron firing began preparing, while its preparation is timed. */
  private preparingSince: number | undefined;

  constructor(
    private readonly ctx: JobContext,
    private readonly config: ConfigService,
    private readonly sharding: ShardingService,
    private readonly execution: ExecutionService,
    private readonly failover: FailoverService,
    private readonly report: FiringReport,
    private readonly markers: FiringMarkers,
    private readonly dispatch: ItemDispatch,
    private readonly hooks: FiringHookRunner,
    private readonly machine: FiringMachine,
  ) {}

  /** A cron instant came while the previous firing runs here. */
  async overlap(): Promise<void> {
    // The previous firing is still running here: this one is a misfire (ElasticJob's misfireIfRunning).
    const config = this.config.load();
    this.machine.setMissed(true);
    this.report.overlap();
    const items = this.sharding.getLocalShardingItems(config.shardingTotalCount);
    this.report.skipped('CRON', 'previous-firing-running', items);
    if (!config.monitorExecution || !this.ctx.connection.isConnected()) return;
    try {
      await this.execution.setMisfire(items);
      if (items.length > 0) this.ctx.events.publish('misfire.flagged', { items });
    } catch (error) {
      this.ctx.logger.warn(`could not flag misfire: ${describeError(error)}`);
    }
  }

  /** One firing's steps (ElasticJob's ElasticJobExecutor.execute). */
  async firing(
    source: FiringSource,
    scheduledAt?: number,
    jobParameter?: string,
    /** A rerun's items: only these of this instance's run (undefined: all of them). */
    onlyItems?: readonly number[],
  ): Promise<void> {
    if (!this.ctx.connection.isConnected()) {
      this.machine.setMissed(true);
      this.ctx.logger.warn('not connected to ZooKeeper: firing skipped (misfire)');
      this.report.skipped(source, 'not-connected', []);
      return;
    }
    if (this.machine.rejoining()) {
      this.machine.setMissed(true);
      this.ctx.logger.warn('connected with a new session, not registered on it yet: firing skipped (misfire)');
      this.report.skipped(source, 'rejoining', []);
      return;
    }
    // A trigger's job parameter replaces the job's for this firing (its items and listeners see it).
    const withParameter = (loaded: JobConfiguration): JobConfiguration =>
      jobParameter === undefined ? loaded : { ...loaded, jobParameter };
    // Its preparation is timed for the next instants' lead (schedule/preparation-lead.ts), from after the resharding
    // it may wait for below: that wait is the cluster's, not this process's.
    this.preparingSince = scheduledAt === undefined ? undefined : Date.now();
    let config = withParameter(this.config.load());
    // Each step below awaited only when the cache says it has something to do: an await costs a thousand jobs'
    // firings at one instant a promise and a suspension each (docs/benchmarks.md, issue 43).
    if (config.maxTimeDiffSeconds >= 0) await this.checkClockDifference(config);
    if (config.monitorExecution && this.execution.hasStaleOwnMarkers(config.shardingTotalCount))
      await this.execution.removeStaleOwnMarkers(config.shardingTotalCount);
    if (config.failover) {
      // ElasticJob: a firing that finds items taken over by this instance runs only those.
      const taken = this.failover.getLocalFailoverItems(config.shardingTotalCount);
      if (taken.length > 0) {
        this.ctx.logger.log(`running taken-over items [${describeItems(taken)}]`);
        if (onlyItems !== undefined)
          this.ctx.logger.warn(
            `rerun of items [${describeItems(onlyItems)}] not done: this firing ran taken-over items first, as ` +
              'ElasticJob does; ask the rerun again',
          );
        await this.hooks.around(
          taken,
          config,
          'FAILOVER',
          () => this.machine.stopped(),
          async () => {
            await this.execute(taken, config, 'FAILOVER', true);
            await this.claimFailover(config);
          },
        );
        return;
      }
    }
    const resharding = this.sharding.isNeedSharding();
    let overtaken = false;
    if (this.sharding.mayNeedSharding(config)) {
      const missedBefore = this.machine.missed();
      // A resharding is done on its firing's instant, not ahead of it: a firing of the next instant then never
      // reshards before that instant, which makes "ended after the next instant" below mean "done by a firing of a
      // later instant than ours".
      while (scheduledAt !== undefined && scheduledAt > Date.now()) await untilInstant(scheduledAt);
      await this.sharding.shardingIfNecessary(config);
      // A cron firing (only those have an instant; a trigger or rerun has none) whose next instant came during the
      // resharding (overlap() flagged it): see overtakenByNextInstant.
      overtaken = scheduledAt !== undefined && !missedBefore && this.machine.missed();
    }
    if (resharding && this.preparingSince !== undefined) this.preparingSince = Date.now();
    config = withParameter(this.config.load());
    const items = this.limitTo(this.localItems(config), onlyItems);
    overtaken &&= config.misfire && items.length > 0;
    if (
      config.monitorExecution &&
      this.execution.anyMarkerCached(items) &&
      (await this.execution.misfireIfHasRunningItems(items))
    ) {
      const stillRunning = this.execution.runningItems(items);
      this.ctx.logger.log(
        `items [${describeItems(stillRunning)}] are still running: misfire, they run after completion`,
      );
      this.ctx.events.publish('misfire.flagged', { items });
      this.report.skipped(source, 'items-still-running', stillRunning);
      return;
    }
    if (items.length === 0) this.report.skipped(source, 'no-items', []);
    // ElasticJob's order: items, misfired items, a failover claim, then the after listeners.
    await this.hooks.around(
      items,
      config,
      source,
      () => this.machine.stopped(),
      async () => {
        if (overtaken) await this.overtakenByNextInstant(items, config, source);
        else await this.execute(items, config, source, false, scheduledAt);
        // Each step awaited only when it has something to do (the steady state: neither), as above.
        const afterMisfired = this.runMisfired(config);
        config = afterMisfired instanceof Promise ? await afterMisfired : afterMisfired;
        if (!config.misfire) this.machine.setMissed(false);
        if (config.failover) await this.claimFailover(config);
      },
    );
  }

  /**
   * A cron firing whose resharding ended after the next instant came here runs its items once, as that instant's
   * catch-up, not late for its own instant and again right behind. A resharding is done on its firing's instant, so
   * this one was done by a firing of a later instant: the leader had fired ours with the assignment before it (the
   * flag reached it after its look), and items that moved here already ran for our instant on their old owner
   * (test/faults/ensemble.spec.ts: a peer that joined ran them a second time). ElasticJob runs both
   * (ElasticJobExecutor.execute, then its misfire loop); with `misfire` off nothing is caught up, so both run.
   */
  private async overtakenByNextInstant(items: number[], config: JobConfiguration, source: FiringSource): Promise<void> {
    this.ctx.logger.log(
      `the resharding this firing waited for ended after the next instant: items [${describeItems(items)}] run ` +
        'once, as its catch-up',
    );
    this.report.skipped(source, 'overtaken', items);
    this.machine.setMissed(false);
    if (config.monitorExecution) {
      const flagged = this.execution.getMisfiredItems(items);
      if (flagged.length > 0) await this.execution.clearMisfire(flagged);
    }
    await this.execute(items, config, 'CATCH_UP');
  }

  /** A rerun's items among this instance's; those that are not (moved, disabled, out of range) are logged. */
  private limitTo(items: number[], onlyItems: readonly number[] | undefined): number[] {
    if (onlyItems === undefined) return items;
    const kept = items.filter((item) => onlyItems.includes(item));
    const left = onlyItems.filter((item) => !items.includes(item));
    if (left.length > 0)
      this.ctx.logger.warn(
        `rerun of items [${describeItems(left)}] not done here: they are not this instance's to run now (moved to ` +
          `another instance, disabled or beyond the count); rerun them where they are`,
      );
    if (kept.length > 0) this.ctx.logger.log(`rerunning items [${describeItems(kept)}]`);
    return kept;
  }

  /**
   * ElasticJob: while misfire && !needSharding && misfired items → clear and run again. Returns the last config; a
   * promise of it only when something is run again (the steady state looks, finds nothing and awaits nothing).
   */
  private runMisfired(config: JobConfiguration): JobConfiguration | Promise<JobConfiguration> {
    if (!this.mayRunMisfired(config)) return config;
    const loaded = this.config.load();
    const current = this.localItems(loaded);
    const misfired = loaded.monitorExecution ? this.execution.getMisfiredItems(current) : [];
    if (misfired.length === 0 && !this.machine.missed()) return loaded;
    return this.runMisfiredFrom(loaded, current, misfired);
  }

  private mayRunMisfired(config: JobConfiguration): boolean {
    return (
      !this.machine.stopped() &&
      config.misfire &&
      !this.sharding.isNeedSharding() &&
      this.ctx.connection.isConnected() &&
      !this.machine.rejoining()
    );
  }

  /** runMisfired's loop, from a look that found items to run again. */
  private async runMisfiredFrom(
    config: JobConfiguration,
    current: number[],
    misfired: number[],
  ): Promise<JobConfiguration> {
    for (;;) {
      const rerun = misfired.length > 0 ? misfired : current;
      this.machine.setMissed(false);
      await this.execution.clearMisfire(misfired);
      this.ctx.logger.log(`running misfired items [${describeItems(rerun)}]`);
      await this.execute(rerun, config, 'CATCH_UP');
      if (!this.mayRunMisfired(config)) return config;
      config = this.config.load();
      current = this.localItems(config);
      misfired = config.monitorExecution ? this.execution.getMisfiredItems(current) : [];
      if (misfired.length === 0 && !this.machine.missed()) return config;
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
    if (this.machine.stopped() || this.machine.firing() || this.dispatch.anyRunning) return;
    const config = this.config.load();
    if (!config.failover) return;
    if ((await this.failover.claim(() => !this.machine.firing() && !this.dispatch.anyRunning)) !== undefined)
      this.machine.request('FAILOVER');
  }

  private async claimFailover(config: JobConfiguration): Promise<void> {
    if (this.machine.stopped() || !config.failover || !this.ctx.connection.isConnected()) return;
    // At the end of a firing: the claimed item runs as soon as this firing is over.
    if ((await this.failover.claim(() => !this.dispatch.anyRunning)) !== undefined) this.machine.queue('FAILOVER');
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
   * Runs `wanted` (those of them whose running marker we write) through the item dispatch, telling the firing's
   * start and end. `failoverRun` removes the failover markers of the items afterwards.
   */
  private async execute(
    wanted: number[],
    config: JobConfiguration,
    source: FiringSource,
    failoverRun = false,
    startAt?: number,
  ): Promise<void> {
    if (wanted.length === 0) return;
    const items = await this.markers.begin(wanted, config);
    if (startAt !== undefined && this.preparingSince !== undefined) {
      this.ctx.preparationLead.prepared(this.preparingSince, Date.now());
      this.preparingSince = undefined;
    }
    if (items.length === 0) {
      this.report.skipped(source, 'items-still-running', wanted);
      return;
    }
    // Prepared ahead of the cron instant: start the items on it, not before.
    // (Timers may wake a millisecond early: loop until the instant has come.)
    while (startAt !== undefined && startAt > Date.now()) await untilInstant(startAt);
    const taskId = buildTaskId(this.ctx.jobName, items, this.ctx.instanceId);
    const started = this.report.starting(source, taskId, items);
    const refusal = this.machine.mayStartItems();
    if (refusal !== undefined) {
      if (!this.machine.stopped()) this.machine.setMissed(true);
      this.report.skipped(source, this.machine.rejoining() ? 'rejoining' : 'halted', items);
      this.ctx.logger.warn(`items [${describeItems(items)}] not started: ${refusal}`);
      await this.markers.end(items, config);
      return;
    }
    let outcome: DispatchOutcome = { success: true, handlerFailures: [] };
    try {
      this.report.firingStarted(started);
      outcome = await this.dispatch.run(
        items,
        config,
        { source, taskId, scheduledAt: startAt },
        this.errorHandler(config),
        () => this.machine.mayStartItems(),
        (item) => this.retryRefusal(item, config),
      );
    } finally {
      // The other jobs' items of this instant start first; then this firing's bookkeeping.
      await untilAfterThisInstant();
      await this.markers.end(items, config, failoverRun);
      this.report.firingCompleted(started, outcome.success);
    }
    const failures = outcome.handlerFailures;
    if (failures.length > 0) {
      // THROW (or a custom handler that threw): the firing fails; it is logged by fire(), the app goes on.
      throw failures.length === 1 ? failures[0] : new AggregateError(failures, `${failures.length} items failed`);
    }
  }

  /**
   * Why a failed item may not run again in this firing (docs/guide/item-policies.md, "Retries"), or undefined: only on
   * the instance that owns it, connected, neither shutting down nor halted, the item not disabled, no resharding due.
   */
  private retryRefusal(item: number, config: JobConfiguration): string | undefined {
    const refusal = this.machine.mayStartItems();
    if (refusal !== undefined) return refusal;
    if (this.machine.stopped()) return 'the job is stopping here';
    if (!this.ctx.connection.isConnected()) return 'not connected to ZooKeeper';
    if (this.ctx.storage.cached.has(this.ctx.paths.disabled(item))) return 'the item was disabled';
    if (this.sharding.isNeedSharding()) return 'the job is to be resharded: the item may move';
    if (!this.sharding.getLocalShardingItems(config.shardingTotalCount).includes(item))
      return "the item is no longer this instance's";
    return undefined;
  }

  /** The configured handler by name; a name this job cannot resolve (never after validation) logs, as LOG does. */
  private errorHandler(config: JobConfiguration): JobErrorHandler {
    return this.ctx.plugins.errorHandler(config.jobErrorHandlerType) ?? this.ctx.plugins.errorHandler('LOG')!;
  }
}
