import { everyItem } from '../job/paths.js';
import type { WorkflowOptions } from '../interfaces/workflow-options.interface.js';

/**
 * A workflow run's state, as kept in its ZooKeeper node (`/.workflows/{name}/runs/{runId}`, JSON), and the rules
 * that move it on: pure functions, so that the coordinator, the operator and the tests apply the same ones
 * (docs/guide/workflows.md, "A run").
 */

/** RUNNING until every step completed (COMPLETED), or nothing can go on after a failed step (FAILED), or cancelled. */
export type WorkflowRunState = 'RUNNING' | 'COMPLETED' | 'FAILED' | 'CANCELLED';
/** PENDING until its parents completed; RUNNING once started; COMPLETED when every item succeeded; else FAILED. */
export type WorkflowStepState = 'PENDING' | 'RUNNING' | 'COMPLETED' | 'FAILED';

/** One step of a run. @publicApi */
export interface WorkflowStepRun {
  /** The steps it waits for. */
  parents: string[];
  state: WorkflowStepState;
  /** How many times it was started in this run: 1 once started, one more per re-run. */
  attempts: number;
  /** The job's shardingTotalCount when the step first started. */
  total?: number;
  /** ISO instants of its last start and of its end. */
  startedAt?: string;
  endedAt?: string;
  /** The items that failed (FAILED). */
  failedItems?: number[];
  /** The items its last start ran: every item, or the failed ones of a re-run. */
  items?: number[];
  /** Set by a re-run of the failed items only: the items the next start runs. */
  rerunItems?: number[];
  /**
   * Items of this start left by an instance that went before running them, by item: the live instances they were
   * handed to (`rerun/{id}`); handed again only once none of those is online (docs/guide/workflows.md, "Faults").
   */
  handedOver?: Record<string, string[]>;
  /**
   * The instances its last start reached (a trigger or a rerun), less those gone whose trigger a hand-over deleted:
   * a live owner of an item outside them came online after the start, and is handed the item (docs/guide/workflows.md,
   * "Faults").
   */
  given?: string[];
}

/** A run of a workflow. @publicApi */
export interface WorkflowRun {
  id: string;
  workflow: string;
  trigger: 'manual' | 'cron';
  state: WorkflowRunState;
  /** ISO instants. */
  createdAt: string;
  endedAt?: string;
  steps: Record<string, WorkflowStepRun>;
}

/** What an item of a step did in a run, recorded by the instance that ran it. */
export interface ItemOutcome {
  ok: boolean;
  instanceId: string;
  /** ISO instant of its end. */
  at: string;
  /** The step's attempt it ran in. */
  attempt: number;
  cause?: string;
}

/** What a move of a run did, for events and logs. */
export type WorkflowTransition =
  | { type: 'step.started'; step: string; items: number[]; attempt: number }
  | { type: 'step.completed'; step: string }
  | { type: 'step.failed'; step: string; failedItems: number[] }
  | { type: 'run.completed' }
  | { type: 'run.failed'; failedSteps: string[] };

/** A new run of the workflow, every step PENDING. */
export function newRun(workflow: WorkflowOptions, id: string, trigger: WorkflowRun['trigger'], now: Date): WorkflowRun {
  const steps: Record<string, WorkflowStepRun> = {};
  for (const [step, parents] of Object.entries(workflow.steps))
    steps[step] = { parents: [...parents], state: 'PENDING', attempts: 0 };
  return { id, workflow: workflow.name, trigger, state: 'RUNNING', createdAt: now.toISOString(), steps };
}

/** An id that sorts as runs were made: the instant, then a random tail (two triggers in one millisecond). */
export function newRunId(now: Date, tail = Math.random().toString(36).slice(2, 8)): string {
  return `${now.toISOString().replace(/[-:.]/g, '')}-${tail}`;
}

/** The id of the run a cron instant makes: the same on every instance, so that only one of them can create it. */
export function cronRunId(instant: Date): string {
  return `${instant.toISOString().replace(/[-:.]/g, '')}-cron`;
}

/**
 * Moves a RUNNING run on as far as its items' outcomes allow: a RUNNING step whose items all have an outcome
 * completes (all succeeded) or fails; a PENDING step whose parents all completed starts (`totals` gives its item
 * count, read from the job's config node); when nothing runs and nothing can start, the run ends: COMPLETED when
 * every step completed, FAILED otherwise. Returns undefined when nothing changes (the caller writes nothing).
 * A step starts in the returned run only: its start and the write of the run are one transaction (the caller's),
 * so that a step is never started twice nor skipped across coordinators.
 */
export function advanceRun(
  current: WorkflowRun,
  outcomes: ReadonlyMap<string, ReadonlyMap<number, ItemOutcome>>,
  totals: ReadonlyMap<string, number>,
  now: Date,
): { run: WorkflowRun; transitions: WorkflowTransition[] } | undefined {
  if (current.state !== 'RUNNING') return undefined;
  const run: WorkflowRun = structuredClone(current);
  const transitions: WorkflowTransition[] = [];
  const at = now.toISOString();
  for (const [name, step] of Object.entries(run.steps)) {
    if (step.state !== 'RUNNING' || step.total === undefined) continue;
    const items = outcomes.get(name) ?? new Map<number, ItemOutcome>();
    const all = everyItem(step.total);
    if (!all.every((item) => items.has(item))) continue;
    const failed = all.filter((item) => !items.get(item)!.ok);
    step.endedAt = at;
    if (failed.length === 0) {
      step.state = 'COMPLETED';
      delete step.failedItems;
      transitions.push({ type: 'step.completed', step: name });
    } else {
      step.state = 'FAILED';
      step.failedItems = failed;
      transitions.push({ type: 'step.failed', step: name, failedItems: failed });
    }
  }
  for (const [name, step] of Object.entries(run.steps)) {
    if (step.state !== 'PENDING') continue;
    if (!step.parents.every((parent) => run.steps[parent]?.state === 'COMPLETED')) continue;
    const total = step.total ?? totals.get(name);
    if (total === undefined) continue; // its job's config is not readable now: the next look starts it
    const items = step.rerunItems ?? everyItem(total);
    step.state = 'RUNNING';
    step.total = total;
    step.attempts += 1;
    step.startedAt = at;
    step.items = items;
    delete step.endedAt;
    delete step.rerunItems;
    delete step.handedOver;
    delete step.given;
    transitions.push({ type: 'step.started', step: name, items, attempt: step.attempts });
  }
  const steps = Object.values(run.steps);
  if (!steps.some((step) => step.state === 'RUNNING')) {
    if (steps.every((step) => step.state === 'COMPLETED')) {
      run.state = 'COMPLETED';
      run.endedAt = at;
      transitions.push({ type: 'run.completed' });
    } else if (steps.some((step) => step.state === 'FAILED')) {
      run.state = 'FAILED';
      run.endedAt = at;
      const failedSteps = Object.keys(run.steps).filter((name) => run.steps[name]!.state === 'FAILED');
      transitions.push({ type: 'run.failed', failedSteps });
    }
  }
  return transitions.length === 0 ? undefined : { run, transitions };
}

/** The steps a coordinator must read item outcomes of: the RUNNING ones. */
export function runningSteps(run: WorkflowRun): string[] {
  return Object.keys(run.steps).filter((name) => run.steps[name]!.state === 'RUNNING');
}

/** The PENDING steps whose parents all completed: their item counts are needed to start them. */
export function startableSteps(run: WorkflowRun): string[] {
  return Object.keys(run.steps).filter((name) => {
    const step = run.steps[name]!;
    return (
      step.state === 'PENDING' &&
      step.total === undefined &&
      step.parents.every((parent) => run.steps[parent]?.state === 'COMPLETED')
    );
  });
}

/**
 * An operator's re-run of a FAILED step: its failed items only (`failed`) or all of them (`all`). The step is PENDING
 * again, so the coordinator starts it (its parents completed) and the run goes on from there; a FAILED run is
 * RUNNING again. Returns the new run and the items whose outcomes must be deleted with it (in one transaction), or
 * what is wrong.
 */
export function rerunStep(
  current: WorkflowRun,
  name: string,
  mode: 'failed' | 'all',
): { run: WorkflowRun; clearItems: number[] } | string {
  const step = current.steps[name];
  if (!step)
    return `'${name}' is not a step of workflow '${current.workflow}' (steps: ${Object.keys(current.steps).join(', ')})`;
  if (current.state === 'CANCELLED' || current.state === 'COMPLETED')
    return `run ${current.id} is ${current.state}: trigger a new run instead`;
  if (step.state !== 'FAILED')
    return `step '${name}' of run ${current.id} is ${step.state}, not FAILED: only a failed step is re-run`;
  const run: WorkflowRun = structuredClone(current);
  const again = run.steps[name]!;
  const clearItems = mode === 'failed' ? [...(step.failedItems ?? [])] : everyItem(step.total ?? 0);
  again.state = 'PENDING';
  if (mode === 'failed') again.rerunItems = clearItems;
  else delete again.rerunItems;
  delete again.failedItems;
  delete again.endedAt;
  run.state = 'RUNNING';
  delete run.endedAt;
  return { run, clearItems };
}

/** An operator's cancel: a RUNNING or FAILED run ends CANCELLED (items under way finish, nothing more starts). */
export function cancelRun(current: WorkflowRun, now: Date): WorkflowRun | string {
  if (current.state === 'COMPLETED' || current.state === 'CANCELLED')
    return `run ${current.id} has ended (${current.state}): nothing to cancel`;
  return { ...structuredClone(current), state: 'CANCELLED', endedAt: now.toISOString() };
}

/** Reads a run node's JSON; undefined when it is not a run (garbage someone wrote: the caller logs the node). */
export function parseRun(text: string): WorkflowRun | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return undefined;
    const run = value as WorkflowRun;
    const states = ['RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED'];
    if (typeof run.id !== 'string' || !states.includes(run.state)) return undefined;
    if (typeof run.steps !== 'object' || run.steps === null) return undefined;
    for (const step of Object.values(run.steps))
      if (
        typeof step !== 'object' ||
        step === null ||
        !Array.isArray(step.parents) ||
        typeof step.attempts !== 'number'
      )
        return undefined;
    return run;
  } catch {
    return undefined;
  }
}

/** Reads an item outcome's JSON; undefined when it is not one. */
export function parseOutcome(text: string): ItemOutcome | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return undefined;
    const outcome = value as ItemOutcome;
    return typeof outcome.ok === 'boolean' && typeof outcome.attempt === 'number' ? outcome : undefined;
  } catch {
    return undefined;
  }
}
