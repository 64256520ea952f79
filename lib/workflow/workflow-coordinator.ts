import { Logger } from '@nestjs/common';
import { describeError, registryErrorCode, InvalidOperationError } from '../errors/elastic-job.errors.js';
import type { WorkflowOptions } from '../interfaces/workflow-options.interface.js';
import type { RegistryCenter } from '../registry/registry-center.js';
import type { TransactionOp, WatchEvent } from '../registry/registry.types.js';
import { CronTrigger } from '../schedule/cron-trigger.js';
import { everyItem, JobNodePath } from '../job/paths.js';
import { expandCronPreset } from '../schedule/cron-expression.js';
import {
  advanceRun,
  cronRunId,
  runningSteps,
  startableSteps,
  type ItemOutcome,
  type WorkflowRun,
  type WorkflowTransition,
} from './workflow-run.js';
import { WorkflowOrphans, type Orphans, type StepReach } from './workflow-orphans.js';
import { WorkflowStore, type StoredRun } from './workflow-store.js';
import { DEFAULT_KEEP_RUNS } from './workflow-validation.js';

/** A lost race (another writer moved the run first) is read again at once, this many times in a row at most. */
const RACES = 20;
/** Looks at a step's orphans whose outcomes keep arriving meanwhile, before the next change's look is left to judge. */
const ORPHAN_LOOKS = 3;

/** What a coordinator tells about a run it moved: the run after the move and what the move did. */
export type WorkflowTransitionSink = (run: WorkflowRun, transition: WorkflowTransition) => void;

/**
 * One workflow on one instance. Every instance of the workflow runs one; the one holding the workflow's leader node
 * coordinates (`/.workflows/{name}/leader/instance`, ephemeral, raced for as a job's `leader/election/instance` is
 * by its LeaderService): it watches the workflow's nodes and, at every change (an item's outcome recorded, a run
 * created, a re-run asked), moves the active run on from its stored state (workflow-run.ts, advanceRun): each move
 * is one transaction conditional on the run's version, the starts of steps (their triggers) in it, so that a
 * coordinator that lost its session mid-move and the next one can never both start a step. When the leader crashes
 * or its session ends, its node goes and the next instance to create it carries the run on from the stored state.
 */
export class WorkflowCoordinator {
  readonly store: WorkflowStore;
  private readonly orphans: WorkflowOrphans;
  private readonly logger: Logger;
  private leading = false;
  private closed = false;
  private advancing: Promise<void> | undefined;
  /** The run this coordinator last looked at: read beside the `active` node at the next look (it is usually that one). */
  private lastRunId: string | undefined;
  private again = false;
  private cron: CronTrigger | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly leaderPath: string;
  private readonly watcher = (event: WatchEvent): void => {
    if (event.path === this.leaderPath && event.type === 'NODE_DELETED') void this.elect();
    else this.kick();
  };

  private readonly instancePaths: string[];
  private readonly instancesWatcher = (): void => this.kick();
  /** Steps said to wait for an instance, so that it is logged once per run and step. */
  private readonly waitingSaid = new Set<string>();

  constructor(
    private readonly registry: RegistryCenter,
    readonly workflow: WorkflowOptions,
    private readonly instanceId: string,
    private readonly sink: WorkflowTransitionSink = () => undefined,
  ) {
    this.logger = new Logger(`ElasticJob:workflow:${workflow.name}`);
    this.store = new WorkflowStore(registry, workflow.name, (message) => this.logger.warn(message));
    this.orphans = new WorkflowOrphans(registry);
    this.leaderPath = `${this.store.paths.root}/leader/instance`;
    // Each step job's resharding flag too: a gone instance's items are handed over once it is set (recoverOrphans).
    this.instancePaths = Object.keys(workflow.steps).flatMap((step) => {
      const job = new JobNodePath(step);
      return [job.instances, job.shardingNecessary];
    });
  }

  private started = false;

  /** Whether it has started: its definition written, its watch set, the leader node raced for. */
  get isStarted(): boolean {
    return this.started;
  }

  /** Whether this instance coordinates the workflow now. */
  get isLeader(): boolean {
    return this.leading;
  }

  async start(): Promise<void> {
    await this.store.writeDefinition(this.workflow);
    await this.registry.ensurePath(`${this.store.paths.root}/leader`);
    this.unsubscribe = this.registry.onStateChange((change) => {
      if (change.state === 'SUSPENDED' || change.state === 'LOST') this.leading = false;
      else if (change.state === 'RECONNECTED') void this.rejoin();
    });
    await this.watchAll();
    await this.elect();
    this.started = true;
    if (this.workflow.cron !== undefined) {
      this.cron = new CronTrigger(expandCronPreset(this.workflow.cron), this.workflow.timeZone, (at) => {
        if (this.leading) void this.trigger('cron', cronRunId(at)).catch((error: unknown) => this.cronFailed(error));
      });
      this.cron.start();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.cron?.stop();
    this.unsubscribe?.();
    this.registry.removePersistentRecursiveWatch(this.store.paths.root, this.watcher);
    for (const path of this.instancePaths) this.registry.removePersistentRecursiveWatch(path, this.instancesWatcher);
    await this.advancing?.catch(() => undefined);
    if (this.leading) {
      this.leading = false;
      await this.registry.remove(this.leaderPath).catch(() => undefined);
    }
  }

  /** A new run (one at a time: refused with InvalidOperationError while one is active). */
  async trigger(trigger: WorkflowRun['trigger'], runId: string): Promise<WorkflowRun> {
    const run = await this.store.createRun(this.workflow, runId, trigger, new Date());
    this.logger.log(`run ${runId} created (${trigger})`);
    return run;
  }

  private cronFailed(error: unknown): void {
    if (error instanceof InvalidOperationError) this.logger.warn(`cron firing skipped: ${error.detail}`);
    else this.logger.error(`cron firing could not create a run: ${describeError(error)}`);
  }

  /** A new session (or the same one back): the watch is re-added, leadership checked again, the run looked at. */
  private async rejoin(): Promise<void> {
    if (this.closed) return;
    try {
      await this.watchAll();
      await this.elect();
      this.kick();
    } catch (error) {
      this.logger.warn(`could not rejoin after a reconnection: ${describeError(error)}; again at the next one`);
    }
  }

  /**
   * The workflow's nodes, and each step's `instances/`: a step whose job has no instance online waits, and starts
   * when one comes (a trigger then would reach nobody and the step would never end); an instance that leaves may
   * leave items to hand over (recoverOrphans), once its job's resharding flag (watched too) is set.
   */
  private async watchAll(): Promise<void> {
    await this.registry.addPersistentRecursiveWatch(this.store.paths.root, this.watcher);
    for (const path of this.instancePaths) await this.registry.addPersistentRecursiveWatch(path, this.instancesWatcher);
  }

  /** Race for the leader node; whoever holds it (this session's node) coordinates. Watched: its deletion re-elects. */
  private async elect(): Promise<void> {
    if (this.closed || !this.registry.isConnected()) return;
    try {
      await this.registry.create(this.leaderPath, Buffer.from(this.instanceId, 'utf8'), 'EPHEMERAL');
    } catch (error) {
      if (registryErrorCode(error) !== 'NODE_EXISTS') {
        this.logger.warn(`election failed: ${describeError(error)}; again at the next reconnection`);
        return;
      }
    }
    const stat = await this.registry.exists(this.leaderPath).catch(() => undefined);
    if (stat === undefined) return void (await this.elect()); // gone already: race again
    const leading = stat.ephemeralOwner === this.registry.getSessionId();
    if (leading && !this.leading) this.logger.log(`coordinating workflow '${this.workflow.name}' (${this.instanceId})`);
    this.leading = leading;
    if (leading) this.kick();
  }

  /** Looks at the active run again (serialized: a change during a look makes one more look after it). */
  kick(): void {
    if (this.closed || !this.leading) return;
    if (this.advancing) {
      this.again = true;
      return;
    }
    this.advancing = this.advanceLoop().finally(() => {
      this.advancing = undefined;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  private async advanceLoop(): Promise<void> {
    for (let race = 1; race <= RACES && this.leading && !this.closed; race++) {
      try {
        await this.advance();
        return;
      } catch (error) {
        const code = registryErrorCode(error);
        if (code === 'BAD_VERSION' || code === 'NODE_EXISTS' || code === 'NO_NODE') continue; // moved meanwhile
        this.logger.warn(`could not move the run on: ${describeError(error)}; again at the next change`);
        return;
      }
    }
  }

  /**
   * One move of the active run, if its stored state and its items' outcomes allow one. The steps its completions make
   * startable start in the same move (one transaction, not a second look after it), so what they need (their job's
   * item count, an instance online) is read beside the outcomes, for every step whose parents are all running or
   * completed: the handover from a parent's last item to its child's first is a few round trips (docs/guide/workflows.md).
   */
  private async advance(): Promise<void> {
    // The run last moved is read beside the `active` node naming the run (sent after it: never older than it).
    const guess = this.lastRunId;
    const [active, guessed] = await Promise.all([
      this.store.readActive(),
      guess === undefined ? undefined : this.store.readRun(guess),
    ]);
    if (!active) return;
    this.lastRunId = active.runId;
    const stored = active.runId === guess ? guessed : await this.store.readRun(active.runId);
    if (!stored) return;
    const { run } = stored;
    const [outcomes, probes] = await Promise.all([
      this.store.readOutcomes(run.id, runningSteps(run)),
      Promise.all(nextSteps(run).map(async (step) => ({ step, ...(await this.probe(step)) }))),
    ]);
    const completing = advanceRun(run, outcomes, new Map(), new Date())?.run ?? run;
    const startable = new Set(startableSteps(completing));
    const totals = new Map<string, number>();
    for (const { step, total, online } of probes) {
      if (!startable.has(step)) continue;
      if (total === undefined) this.logger.warn(`step '${step}': its job's config cannot be read; not started yet`);
      else if (!online) {
        if (!this.waitingSaid.has(`${run.id}/${step}`))
          this.logger.warn(`run ${run.id}: step '${step}' waits for an instance of job '${step}' to come online`);
        this.waitingSaid.add(`${run.id}/${step}`);
      } else totals.set(step, total);
    }
    const moved = advanceRun(run, outcomes, totals, new Date());
    if (!moved) return this.recoverOrphans(stored, outcomes, active);
    const starts = await Promise.all(
      moved.transitions.map(async (transition) => {
        if (transition.type !== 'step.started') return [];
        const step = moved.run.steps[transition.step]!;
        const start = await this.store.startOps(run.id, transition.step, transition.items, step.total!);
        step.given = start.given;
        return start.ops;
      }),
    );
    if (!this.leading || this.closed) return;
    await this.store.writeRun(stored, moved.run, starts.flat(), active);
    for (const transition of moved.transitions) this.report(moved.run, transition);
    if (moved.run.state !== 'RUNNING') {
      const pruned = await this.store.prune(this.workflow.keepRuns ?? DEFAULT_KEEP_RUNS);
      if (pruned.length > 0) this.logger.log(`runs deleted (keepRuns): ${pruned.join(', ')}`);
    }
  }

  /** A step's job: its item count (undefined when its config cannot be read) and whether an instance is online. */
  private async probe(step: string): Promise<{ total: number | undefined; online: boolean }> {
    const [total, online] = await Promise.all([this.store.readTotal(step), this.store.hasInstances(step)]);
    return { total, online };
  }

  /**
   * Nothing to move: items of RUNNING steps that no live instance will run (their instance left after its trigger
   * was written, before running them; or it came online after the triggers and a firing gave it items) are handed
   * over, in one write conditional on the run's version (workflow-orphans.ts). Looked at on every look: an instance
   * leaving or coming kicks one (`instances/` watched), and so does a new coordinator's first.
   */
  private async recoverOrphans(
    stored: StoredRun,
    outcomes: ReadonlyMap<string, ReadonlyMap<number, ItemOutcome>>,
    active: { runId: string; version: number },
  ): Promise<void> {
    const run = structuredClone(stored.run);
    const ops: TransactionOp[] = [];
    const found: string[] = [];
    for (const name of runningSteps(run)) {
      const step = run.steps[name]!;
      const done = outcomes.get(name);
      const missing = (step.items ?? everyItem(step.total ?? 0)).filter((item) => !done?.has(item));
      if (missing.length === 0) continue;
      const orphans = await this.confirmedOrphans(run.id, name, missing, step);
      if (!orphans) continue;
      ops.push(...orphans.ops);
      step.handedOver = { ...step.handedOver, ...orphans.handedTo };
      if (step.given) step.given = step.given.filter((id) => !orphans.dropped.includes(id));
      found.push(`'${name}' items [${orphans.items.join(',')}]`);
    }
    if (ops.length === 0 || !this.leading || this.closed) return;
    await this.store.writeRun(stored, run, ops, active);
    this.logger.warn(
      `run ${run.id}: ${found.join(', ')} nobody would run (owner gone, or online after the step's ` +
        'start): handed to the live instances',
    );
  }

  /**
   * The step's orphans among `missing`, their outcomes read again after the tree was: the look read the outcomes
   * first, and an item failover took over may have run to its end since (its markers gone, its outcome written), which
   * the tree alone takes for an item nobody runs (workflow-faults.spec saw it handed over and run twice). When one
   * has its outcome now, the rest are looked at again; still moving after a few looks, the next change judges.
   * Left open: the outcome is written by the event bus's recorder, not before the markers go, so one written after
   * both reads still makes the item run twice (a window of one request's round trip, where it was the whole look).
   */
  private async confirmedOrphans(
    runId: string,
    step: string,
    missing: readonly number[],
    reach: StepReach,
  ): Promise<Orphans | undefined> {
    let candidates = missing;
    for (let look = 0; look < ORPHAN_LOOKS; look++) {
      const orphans = await this.orphans.find(step, candidates, reach);
      if (!orphans) return undefined;
      const recorded = (await this.store.readOutcomes(runId, [step])).get(step);
      if (!orphans.items.some((item) => recorded?.has(item))) return orphans;
      candidates = candidates.filter((item) => !recorded?.has(item));
      if (candidates.length === 0) return undefined;
    }
    return undefined;
  }

  private report(run: WorkflowRun, transition: WorkflowTransition): void {
    const where = `run ${run.id}`;
    if (transition.type === 'step.started')
      this.logger.log(`${where}: step '${transition.step}' started (attempt ${transition.attempt})`);
    else if (transition.type === 'step.completed') this.logger.log(`${where}: step '${transition.step}' completed`);
    else if (transition.type === 'step.failed')
      this.logger.warn(`${where}: step '${transition.step}' failed, items [${transition.failedItems.join(',')}]`);
    else if (transition.type === 'run.completed') this.logger.log(`${where} completed`);
    else this.logger.warn(`${where} FAILED (steps ${transition.failedSteps.join(', ')}); re-run a step to go on`);
    try {
      this.sink(run, transition);
    } catch (error) {
      this.logger.warn(`a workflow event sink threw: ${describeError(error)}`);
    }
  }
}

/** The steps a move may start: PENDING, never started, every parent running or completed. */
function nextSteps(run: WorkflowRun): string[] {
  return Object.keys(run.steps).filter((name) => {
    const step = run.steps[name]!;
    return (
      step.state === 'PENDING' &&
      step.total === undefined &&
      step.parents.every((parent) => ['RUNNING', 'COMPLETED'].includes(run.steps[parent]?.state ?? ''))
    );
  });
}
