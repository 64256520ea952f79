import type { WorkflowRun } from '../../workflow/workflow-run.js';

/** A workflow as the console's workflow view shows it (GET api/workflows). */
export interface ConsoleWorkflow {
  name: string;
  cron: string | undefined;
  timeZone: string | undefined;
  /** Each step (a job's name) with the steps it waits for, as declared. */
  steps: Record<string, string[]>;
  /**
   * The steps by depth, for drawing the DAG: the first layer waits for nothing, each step sits one layer right of its
   * deepest parent.
   */
  layers: string[][];
  /** Its latest runs kept, newest first, each with its steps' states. */
  runs: WorkflowRun[];
}

/** How many runs of each workflow the view lists (all kept: GET api/workflows/:name/runs). */
export const CONSOLE_WORKFLOW_RUNS = 5;

/**
 * The steps by layer (longest path from a root), each layer in declaration order. The workflow was checked acyclic
 * when declared (workflow-validation.ts); a parent that is no step (a definition written by hand) counts as none.
 */
export function workflowLayers(steps: Readonly<Record<string, readonly string[]>>): string[][] {
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const depthOf = (step: string): number => {
    const known = depth.get(step);
    if (known !== undefined) return known;
    if (visiting.has(step)) return 0; // a cycle in a hand-written definition: drawn, not followed
    visiting.add(step);
    const parents = (steps[step] ?? []).filter((parent) => parent in steps);
    const value = parents.length === 0 ? 0 : 1 + Math.max(...parents.map(depthOf));
    visiting.delete(step);
    depth.set(step, value);
    return value;
  };
  const layers: string[][] = [];
  for (const step of Object.keys(steps)) (layers[depthOf(step)] ??= []).push(step);
  return layers.filter((layer) => layer !== undefined);
}
