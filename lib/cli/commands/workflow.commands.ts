import { quoteInput } from '../../errors/elastic-job.errors.js';
import type { WorkflowRun } from '../../workflow/workflow-run.js';
import { formatTable, NONE } from '../format/table.js';
import { UsageError } from './cli-errors.js';
import type { CliCommand } from './command.js';

/** The workflows' verbs (docs/guide/workflows.md, "Operating runs"), as ElasticJobOperator has them. */

export const workflowTriggerCommand: CliCommand = {
  name: 'workflow-trigger',
  synopsis: '<workflow>',
  summary: 'starts a run of the workflow now (refused while one is under way)',
  arity: [1, 1],
  options: [],
  async run({ operator, args }) {
    const runId = await operator.triggerWorkflow(args[0]!);
    return { json: { workflow: args[0]!, runId }, human: `Started run ${runId} of workflow '${args[0]!}'.\n` };
  },
};

export const workflowRunsCommand: CliCommand = {
  name: 'workflow-runs',
  synopsis: '<workflow>',
  summary: "the workflow's runs kept, newest first, with each step's state",
  arity: [1, 1],
  options: [],
  async run({ operator, args }) {
    const runs = await operator.getWorkflowRuns(args[0]!);
    if (runs.length === 0) return { json: runs, human: `Workflow '${args[0]!}' has no run kept.\n` };
    return {
      json: runs,
      human: formatTable(
        ['RUN', 'STATE', 'CREATED', 'ENDED', 'STEPS'],
        runs.map((run) => [run.id, run.state, run.createdAt, run.endedAt ?? NONE, steps(run)]),
      ),
    };
  },
};

/** `extract:COMPLETED transform:FAILED[2] load:PENDING`, parents first as declared. */
function steps(run: WorkflowRun): string {
  return Object.entries(run.steps)
    .map(([name, step]) => `${name}:${step.state}${step.failedItems ? `[${step.failedItems.join(',')}]` : ''}`)
    .join(' ');
}

export const workflowRerunCommand: CliCommand = {
  name: 'workflow-rerun',
  synopsis: '<workflow> <run> <job> [failed|all]',
  summary: 'runs a failed step of a run again (its failed items, or all), and the run goes on',
  arity: [3, 4],
  options: [],
  check({ args }) {
    if (args[3] !== undefined && args[3] !== 'failed' && args[3] !== 'all')
      throw new UsageError(`the items to run again are 'failed' or 'all', not ${quoteInput(args[3])}`);
  },
  async run({ operator, args }) {
    const items = (args[3] ?? 'failed') as 'failed' | 'all';
    const run = await operator.rerunWorkflowStep(args[0]!, args[1]!, args[2]!, { items });
    return {
      json: run,
      human: `Step '${args[2]!}' of run ${run.id} runs again (${items === 'all' ? 'every item' : 'its failed items'}).\n`,
    };
  },
};

export const workflowCancelCommand: CliCommand = {
  name: 'workflow-cancel',
  synopsis: '<workflow> <run>',
  summary: 'cancels a run: nothing more starts in it',
  arity: [2, 2],
  options: [],
  async run({ operator, args }) {
    const run = await operator.cancelWorkflowRun(args[0]!, args[1]!);
    return { json: run, human: `Cancelled run ${run.id} of workflow '${args[0]!}'.\n` };
  },
};

export const workflowsCommand: CliCommand = {
  name: 'workflows',
  synopsis: '',
  summary: 'the workflows of the namespace, with their cron and each step with the steps it waits for',
  arity: [0, 0],
  options: [],
  async run({ operator }) {
    const workflows = await operator.getWorkflows();
    if (workflows.length === 0) return { json: workflows, human: 'No workflow in this namespace.\n' };
    return {
      json: workflows,
      human: formatTable(
        ['WORKFLOW', 'CRON', 'STEPS'],
        workflows.map((workflow) => [
          workflow.name,
          workflow.cron ?? NONE,
          // `load<-transform,audit`: a step and the steps it waits for, as declared.
          Object.entries(workflow.steps)
            .map(([step, parents]) => (parents.length ? `${step}<-${parents.join(',')}` : step))
            .join(' '),
        ]),
      ),
    };
  },
};
