import { JobConfigurationError, quoteInput } from '../errors/elastic-job.errors.js';
import type { WorkflowOptions } from '../interfaces/workflow-options.interface.js';
import { MAX_JOB_NAME_LENGTH, nodeNameProblem } from '../registry/zookeeper-names.js';
import { expandCronPreset, validateCron, validateTimeZone } from '../schedule/cron-expression.js';

/** Runs kept per workflow unless `keepRuns` says otherwise, and the most it may say. */
export const DEFAULT_KEEP_RUNS = 20;
export const MAX_KEEP_RUNS = 1000;
/** A workflow's steps, at most: its run is one ZooKeeper node (1 MB) holding every step's state. */
export const MAX_WORKFLOW_STEPS = 200;

const KEYS = new Set(['name', 'cron', 'timeZone', 'steps', 'keepRuns']);

function fail(field: string, detail: string): never {
  throw new JobConfigurationError(undefined, field, detail);
}

/**
 * The module's `workflows` option, on its own (no job needs to be known): every name one ZooKeeper node name, a
 * valid cron, each step's parents steps of the same workflow, listed once, no cycle, and no step in two workflows.
 * Throws JobConfigurationError naming the workflow and the field (`workflows[nightly].steps.load`), before anything
 * is written. Returns the workflows with their steps in an order where parents come first.
 */
export function validateWorkflowOptions(workflows: unknown): WorkflowOptions[] {
  if (workflows === undefined) return [];
  if (!Array.isArray(workflows)) fail('workflows', `must be an array of workflows, got ${quoteInput(workflows)}`);
  const names = new Set<string>();
  const stepOwner = new Map<string, string>();
  return workflows.map((workflow: unknown, index) => {
    if (typeof workflow !== 'object' || workflow === null || Array.isArray(workflow))
      fail(`workflows[${index}]`, `must be { name, steps, cron?, timeZone?, keepRuns? }, got ${quoteInput(workflow)}`);
    const options = workflow as Partial<WorkflowOptions>;
    const problem = nameProblem(options.name);
    if (problem) fail(`workflows[${index}].name`, `must be a ZooKeeper node name: ${problem}`);
    const name = options.name as string;
    const at = `workflows[${name}]`;
    for (const key of Object.keys(options))
      if (!KEYS.has(key)) fail(`${at}.${key}`, 'is not a workflow option (name, steps, cron, timeZone, keepRuns)');
    if (names.has(name)) fail(`${at}.name`, `'${name}' names two workflows: give each its own`);
    names.add(name);
    checkSchedule(options, at);
    if (options.keepRuns !== undefined) {
      const keep = options.keepRuns;
      if (!Number.isInteger(keep) || keep < 1 || keep > MAX_KEEP_RUNS)
        fail(`${at}.keepRuns`, `must be an integer 1..${MAX_KEEP_RUNS}, got ${quoteInput(keep)}`);
    }
    const steps = checkSteps(options.steps, at);
    for (const step of Object.keys(steps)) {
      const other = stepOwner.get(step);
      if (other !== undefined)
        fail(`${at}.steps.${step}`, `job '${step}' is already a step of workflow '${other}': a job is a step of one`);
      stepOwner.set(step, name);
    }
    return { ...options, name, steps } as WorkflowOptions;
  });
}

/**
 * Each step against the app's jobs: it must be a one-off job of this app (a job with its own cron would also fire
 * outside its workflow). `jobs` maps a job's name to whether it is one-off.
 */
export function validateWorkflowSteps(
  workflows: readonly WorkflowOptions[],
  jobs: ReadonlyMap<string, { oneOff: boolean }>,
): void {
  for (const workflow of workflows)
    for (const step of Object.keys(workflow.steps)) {
      const job = jobs.get(step);
      if (!job)
        fail(
          `workflows[${workflow.name}].steps.${step}`,
          `'${step}' is not a job of this app: a step is a one-off job (@ShardedJob({ jobName, oneOff: true }))`,
        );
      if (!job.oneOff)
        fail(
          `workflows[${workflow.name}].steps.${step}`,
          `job '${step}' has a cron: a step runs only within its workflow, declare it with oneOff: true`,
        );
    }
}

/** The steps in an order where each comes after its parents (Kahn's algorithm), given a graph without cycles. */
export function stepOrder(steps: Readonly<Record<string, readonly string[]>>): string[] {
  const order: string[] = [];
  const placed = new Set<string>();
  const names = Object.keys(steps).sort();
  while (order.length < names.length) {
    const ready = names.filter((step) => !placed.has(step) && steps[step]!.every((parent) => placed.has(parent)));
    if (ready.length === 0) break; // a cycle: checkSteps refuses it before
    for (const step of ready) {
      placed.add(step);
      order.push(step);
    }
  }
  return order;
}

function nameProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return `got ${quoteInput(value)}`;
  if (value.length > MAX_JOB_NAME_LENGTH) return `longer than ${MAX_JOB_NAME_LENGTH} characters`;
  const problem = nodeNameProblem(value);
  return problem ? `${quoteInput(value)} ${problem}` : undefined;
}

function checkSchedule(options: Partial<WorkflowOptions>, at: string): void {
  if (options.timeZone !== undefined) {
    const tzError = typeof options.timeZone === 'string' ? validateTimeZone(options.timeZone) : 'must be a string';
    if (tzError) fail(`${at}.timeZone`, tzError);
  }
  if (options.cron === undefined) return;
  if (typeof options.cron !== 'string' || options.cron.trim() === '')
    fail(`${at}.cron`, `must be a cron expression (or left out for a workflow run only when triggered)`);
  const cronError = validateCron(expandCronPreset(options.cron), options.timeZone);
  if (cronError) fail(`${at}.cron`, cronError);
}

function checkSteps(value: unknown, at: string): Record<string, readonly string[]> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    fail(`${at}.steps`, `must be { step: [steps it waits for] }, got ${quoteInput(value)}`);
  const steps = value as Record<string, unknown>;
  const names = Object.keys(steps);
  if (names.length === 0) fail(`${at}.steps`, 'has no step: name at least one job');
  if (names.length > MAX_WORKFLOW_STEPS)
    fail(`${at}.steps`, `has ${names.length} steps, at most ${MAX_WORKFLOW_STEPS}`);
  const checked: Record<string, readonly string[]> = {};
  for (const step of names) {
    const problem = nameProblem(step);
    if (problem) fail(`${at}.steps`, `a step must be a job's name (a ZooKeeper node name): ${problem}`);
    const parents = steps[step];
    if (!Array.isArray(parents) || parents.some((parent) => typeof parent !== 'string'))
      fail(`${at}.steps.${step}`, `must list the steps it waits for ([] for none), got ${quoteInput(parents)}`);
    const seen = new Set<string>();
    for (const parent of parents as string[]) {
      if (!(parent in steps))
        fail(`${at}.steps.${step}`, `waits for '${parent}', which is not a step of this workflow: add it as a step`);
      if (parent === step) fail(`${at}.steps.${step}`, 'waits for itself');
      if (seen.has(parent)) fail(`${at}.steps.${step}`, `lists '${parent}' twice`);
      seen.add(parent);
    }
    checked[step] = [...(parents as string[])];
  }
  const cycle = findCycle(checked);
  if (cycle) fail(`${at}.steps`, `has a cycle: ${cycle.join(' -> ')}; a workflow is a graph without cycles`);
  return checked;
}

/** A cycle of steps, each waiting for the next... back to the first; undefined when there is none. */
function findCycle(steps: Readonly<Record<string, readonly string[]>>): string[] | undefined {
  const state = new Map<string, 'visiting' | 'done'>();
  const trail: string[] = [];
  const visit = (step: string): string[] | undefined => {
    if (state.get(step) === 'done') return undefined;
    if (state.get(step) === 'visiting') return [...trail.slice(trail.indexOf(step)), step];
    state.set(step, 'visiting');
    trail.push(step);
    for (const parent of steps[step]!) {
      const cycle = visit(parent);
      if (cycle) return cycle;
    }
    trail.pop();
    state.set(step, 'done');
    return undefined;
  };
  for (const step of Object.keys(steps).sort()) {
    const cycle = visit(step);
    if (cycle) return cycle;
  }
  return undefined;
}
