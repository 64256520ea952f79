import type { ConfigService } from '../config/config.service.js';
import type { JobContext } from '../context/job-context.js';
import type { ShardingService } from '../sharding/sharding.service.js';
import type { FailoverService } from '../failover/failover.service.js';
import type { ExecutionService } from '../execution/execution.service.js';
import { ExecutionEvents, type FiringHooks } from '../events/execution-events.js';
import { FiringHookRunner } from './firing-hooks.js';
import { FiringRun, type FiringMachine } from './firing-run.js';
import { FiringMarkers } from './firing-markers.js';
import { FiringReport } from './firing-report.js';
import { ItemDispatch } from './item-dispatch.js';
import { IDLE, type FiringSource, type FiringState, type QueuedFiring } from '../events/firing-state.js';
import type { JobItemExecutor } from '../plugins/item-executor.js';
import type { ItemInterceptor } from '../../interfaces/item-interceptor.interface.js';
import { describeItems } from '../../util/item-list.js';
import { ManualFirings, type ManualFiring } from './manual-firings.js';
import type { ItemLineBook } from '../policies/item-lines.js';
import type { ItemProgress } from '../../interfaces/sharding-context.interface.js';
import { itemPolicies } from '../policies/item-policies.js';

const NO_MANUAL_FIRING: ManualFiring = { jobParameter: undefined, onlyItems: undefined };

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
 * A facade: where it stands is one field, `state` (events/firing-state.ts, the session's rejoining included), and this class
 * runs the firing's steps; the items run in ItemDispatch (item-dispatch.ts), their running markers in FiringMarkers
 * (firing-markers.ts), and what happens is told by FiringReport (firing-report.ts). Around the items: awaited firing
 * hooks (the seam of job listeners).
 */
export class JobExecutor {
  private state: FiringState = IDLE;
  private readonly hooks: FiringHookRunner;
  /** The trigger or rerun waiting to start, and what it carries. */
  private readonly manual: ManualFirings;
  readonly events: ExecutionEvents;
  private readonly report: FiringReport;
  private readonly markers: FiringMarkers;
  private readonly dispatch: ItemDispatch;
  private readonly run: FiringRun;

  constructor(
    private readonly ctx: JobContext,
    private readonly config: ConfigService,
    sharding: ShardingService,
    execution: ExecutionService,
    failover: FailoverService,
    itemExecutor: JobItemExecutor,
    /** The app's item interceptors, outermost first (shared, read at each item). */
    interceptors: readonly ItemInterceptor[] = [],
    /** At most this many items at once; undefined: all of a firing at once. */
    maxConcurrentItems?: number,
    /** Where items' kept log lines go (the in-memory execution log), if anywhere. */
    lineBook?: ItemLineBook,
  ) {
    this.events = new ExecutionEvents(ctx.logger);
    this.manual = new ManualFirings(ctx.logger, () => ctx.connection.seenZxid?.());
    this.report = new FiringReport(ctx, this.events, (items) => this.servedByFiring(items));
    this.markers = new FiringMarkers(ctx, execution, failover);
    this.dispatch = new ItemDispatch(ctx, itemExecutor, this.report, interceptors, maxConcurrentItems, lineBook);
    this.hooks = new FiringHookRunner(ctx);
    this.run = new FiringRun(
      ctx,
      config,
      sharding,
      execution,
      failover,
      this.report,
      this.markers,
      this.dispatch,
      this.hooks,
      new ExecutorMachine(this),
    );
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
    return this.dispatch.runningItems();
  }

  /** Between a session lost and the re-registration on the new one: no item starts. */
  private get rejoining(): boolean {
    return this.state.rejoining === true;
  }

  private setRejoining(rejoining: boolean): void {
    const state = this.state;
    if ((state.rejoining === true) === rejoining) return;
    if (rejoining) this.state = { ...state, rejoining: true };
    else {
      const { rejoining: _gone, ...rest } = state;
      this.state = rest;
    }
  }

  /** Hooks awaited around every firing that runs items. Returns the call that removes them. */
  addHooks(hooks: FiringHooks): () => void {
    return this.hooks.add(hooks);
  }

  /**
   * Called by the cron trigger, a little before `scheduledAt` (schedule/preparation-lead.ts): the coordination of the firing
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
      if (itemPolicies(this.ctx.jobName, this.config.load().props).overlap === 'cover-early' && this.cover(state.done))
        return;
      void this.run.overlap();
      return;
    }
    this.start('CRON', scheduledAt);
  }

  /**
   * `overlap: 'cover-early'` (XXL-JOB's COVER_EARLY): the running items are aborted and given up, and this cron firing
   * starts once the covered one has ended (its markers removed). False when no item runs here (the firing is between
   * its items: the misfire rule applies).
   */
  private cover(covered: Promise<void>): boolean {
    const items = this.dispatch.cover();
    if (items.length === 0) return false;
    this.ctx.logger.warn(`items [${describeItems(items)}] still running at the next firing: aborted (cover-early)`);
    void covered.then(() => {
      if (this.state.phase === 'IDLE') this.start('CRON');
      else if (this.state.phase === 'FIRING') void this.run.overlap();
    });
    return true;
  }

  /** The latest progress of the items running here that reported one (asked by the operator API, never written). */
  progress(): Map<number, { value: ItemProgress; at: number }> {
    return this.dispatch.progress();
  }

  /**
   * Connected again after firings were skipped: run the catch-up now rather than after the next firing, so a
   * short disconnect (a ZooKeeper server stopping, a leader election in the ensemble) delays work, not drops it.
   */
  catchUpAfterReconnect(): void {
    if (this.state.phase !== 'IDLE') return;
    if (this.manual.isPending) {
      // The trigger or rerun kept while away, with its parameter and items; its misfire loop runs the catch-up.
      this.start('TRIGGER');
      return;
    }
    if (!this.state.missed || !this.config.load().misfire) return;
    this.setMissed(false);
    this.ctx.logger.log('connected again: running the firing skipped while disconnected');
    this.start('CATCH_UP');
  }

  /** The session is lost: running items' signals abort, and no item starts until rejoined(). */
  sessionLost(): void {
    this.setRejoining(true);
    this.abortAll('ZooKeeper session lost');
  }

  /** Re-registered on a new session: items start again, beginning with the firing skipped meanwhile. */
  rejoined(): void {
    this.setRejoining(false);
    this.catchUpAfterReconnect();
  }

  /**
   * A manual trigger (`trigger/{instanceId}`): fire now, or once after the current firing. `jobParameter` replaces
   * the job's for that run (triggers queued behind a firing collapse into one run: the last parameter wins).
   */
  trigger(jobParameter?: string): void {
    this.manual.trigger(jobParameter);
    this.request('TRIGGER');
  }

  /**
   * An operator's rerun (`rerun/{instanceId}`): these items of this instance once more now, or once after the current
   * firing, as a manual trigger limited to them (items no longer ours are left out by the firing, with a log).
   */
  rerun(asked: readonly number[], askedZxid?: bigint): void {
    if (this.manual.rerun(asked, askedZxid)) this.request('TRIGGER');
  }

  /**
   * The firing under way starts these items: remembered for reruns that reach this class later (rerun-order.ts), and
   * a rerun of them queued behind it is served by these starts, which come after its ask ("Running items again").
   */
  private servedByFiring(items: readonly number[]): void {
    if (!this.manual.started(items)) return;
    const state = this.state;
    if (state.phase === 'FIRING' && state.queued === 'TRIGGER') this.state = { ...state, queued: undefined };
  }

  /** Stop starting firings; resolves when the current one is over, or false at `timeoutMs` (then aborts items). */
  async stop(timeoutMs: number): Promise<boolean> {
    const state = this.state;
    const current = state.phase === 'FIRING' ? state.done : state.phase === 'STOPPED' ? state.draining : undefined;
    this.state =
      state.phase === 'STOPPED'
        ? { ...state, draining: current }
        : { phase: 'STOPPED', draining: current, ...(state.rejoining ? { rejoining: true as const } : {}) };
    if (!current) return true;
    // Items waiting out a retry's backoff give it up now (no attempt starts once stopping).
    this.dispatch.wakeRetries();
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
    this.dispatch.abortAll(reason);
  }

  // ---------------------------------------------------------------- state transitions

  /** A firing asked for now: started when idle, queued (once) behind the current one otherwise. */
  private request(source: QueuedFiring): void {
    const state = this.state;
    if (state.phase === 'STOPPED') {
      this.manual.clear();
      return;
    }
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
    if (source === 'TRIGGER' && (this.rejoining || !this.ctx.connection.isConnected())) {
      // Started now, it would be skipped and caught up as a plain catch-up: its job parameter and items lost.
      this.ctx.logger.log('manual firing kept: it starts once connected to ZooKeeper and registered again');
      return;
    }
    let settle!: () => void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    const { missed, rejoining } = this.state as { missed: boolean; rejoining?: true };
    // Two literals rather than a spread of a conditional one: a thousand jobs fire at one instant (issue 43).
    this.state = rejoining
      ? { phase: 'FIRING', source, done, missed, queued: undefined, rejoining }
      : { phase: 'FIRING', source, done, missed, queued: undefined };
    const { jobParameter, onlyItems } = source === 'TRIGGER' ? this.manual.take() : NO_MANUAL_FIRING;
    const ended = (): void => {
      this.onFiringEnded();
      settle();
    };
    // One then() for both outcomes: catch() and finally() made two more promises and finally()'s closures.
    void this.run.firing(source, scheduledAt, jobParameter, onlyItems).then(ended, (error: unknown) => {
      try {
        this.ctx.logger.error(`firing failed: ${describeFailure(error)}`);
      } finally {
        ended();
      }
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
    this.state = state.rejoining
      ? { phase: 'IDLE', missed: state.missed, rejoining: true }
      : { phase: 'IDLE', missed: state.missed };
    // The one queue slot may hold a failover claim while a manual firing (trigger, rerun) waits too: that one runs
    // after, never dropped.
    const next = state.queued ?? (this.manual.isPending ? 'TRIGGER' : undefined);
    if (next !== undefined) this.start(next);
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

  // ---------------------------------------------------------------- one firing (firing-run.ts)

  /** Idle peers claim crashed items (ElasticJob's failoverIfNecessary); a claim fires right away. */
  failoverIfNecessary(): Promise<void> {
    return this.run.failoverIfNecessary();
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
}

/**
 * The executor's state as its firing run sees it: prototype methods over the executor (an object of eight closures
 * was ~580 bytes a job). Reaches the executor's private members by name, as the closures did by scope.
 */
class ExecutorMachine implements FiringMachine {
  constructor(private readonly executor: JobExecutor) {}
  stopped(): boolean {
    return this.executor['stopped'];
  }
  rejoining(): boolean {
    return this.executor['rejoining'];
  }
  firing(): boolean {
    return this.executor.isFiring;
  }
  missed(): boolean {
    return this.executor['missed'];
  }
  setMissed(missed: boolean): void {
    this.executor['setMissed'](missed);
  }
  queue(queued: QueuedFiring): void {
    this.executor['queue'](queued);
  }
  request(source: QueuedFiring): void {
    this.executor['request'](source);
  }
  mayStartItems(): string | undefined {
    return this.executor['mayStartItems']();
  }
}
