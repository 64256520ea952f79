import { InvalidOperationError, registryErrorCode, WorkflowNotFoundError } from '../errors/elastic-job.errors.js';
import type { RegistryCenter } from '../registry/registry-center.js';
import { checkWorkflowNode } from './operator-input.js';
import { cancelRun, newRunId, rerunStep, type WorkflowRun } from '../workflow/workflow-run.js';
import { WorkflowStore } from '../workflow/workflow-store.js';
import { WORKFLOWS_NODE } from '../workflow/workflow-paths.js';
import type { WorkflowOptions } from '../interfaces/workflow-options.interface.js';

/** A lost race with the coordinator (it moved the run meanwhile) is read again this many times. */
const RACES = 5;

/**
 * The operator's verbs on workflows (docs/guide/workflows.md, "Operating runs"), over the workflow's nodes only: a
 * trigger creates a run (its coordinator, wherever it is, starts it), a re-run or a cancel rewrites the run at the
 * version read. The workflow must have been started by an instance of the app once (its definition is stored then).
 */
export class WorkflowOperateApi {
  constructor(private readonly registry: RegistryCenter) {}

  /** A new run; refused while one is active. Resolves with its id. */
  async trigger(name: string): Promise<string> {
    const store = await this.store(name, 'triggerWorkflow');
    const definition = (await store.readDefinition())!;
    const run = await store.createRun(definition, newRunId(new Date()), 'manual', new Date());
    return run.id;
  }

  /**
   * The workflows stored in the namespace (by any app's instances), by name: each one's definition as its instances
   * wrote it at start. A child of `/.workflows` without a readable definition is left out (its store logs it).
   */
  async list(): Promise<WorkflowOptions[]> {
    const names = ((await this.registry.getChildren(`/${WORKFLOWS_NODE}`)) ?? []).sort();
    const definitions = await Promise.all(names.map((name) => new WorkflowStore(this.registry, name).readDefinition()));
    return definitions.flatMap((definition, index) => (definition ? [{ ...definition, name: names[index]! }] : []));
  }

  /** The runs kept (the newest `limit` of them), newest first, each with its steps' states. */
  async runs(name: string, limit = Number.MAX_SAFE_INTEGER): Promise<WorkflowRun[]> {
    const store = await this.store(name, 'getWorkflowRuns');
    // Ids sort as runs were made: only the newest are read (a console shows a few of up to 1000 kept).
    const runs = await Promise.all((await store.runIds()).slice(-limit).map((id) => store.readRun(id)));
    return runs.flatMap((stored) => (stored ? [stored.run] : [])).reverse();
  }

  /** A FAILED step run again (its failed items, or all of them); the run goes on from there. */
  async rerun(name: string, runId: string, step: string, mode: 'failed' | 'all'): Promise<WorkflowRun> {
    const store = await this.store(name, 'rerunWorkflowStep');
    return this.rewrite(store, runId, 'rerunWorkflowStep', async (stored) => {
      const again = rerunStep(stored.run, step, mode);
      if (typeof again === 'string') throw new InvalidOperationError('rerunWorkflowStep', 'job', again);
      return { run: again.run, ops: await store.clearOps(runId, step, again.clearItems) };
    });
  }

  /** The run ends CANCELLED: nothing more starts (items under way finish), and the workflow may run again. */
  async cancel(name: string, runId: string): Promise<WorkflowRun> {
    const store = await this.store(name, 'cancelWorkflowRun');
    return this.rewrite(store, runId, 'cancelWorkflowRun', async (stored) => {
      const cancelled = cancelRun(stored.run, new Date());
      if (typeof cancelled === 'string') throw new InvalidOperationError('cancelWorkflowRun', 'runId', cancelled);
      return { run: cancelled, ops: [] };
    });
  }

  private async rewrite(
    store: WorkflowStore,
    runId: string,
    operation: string,
    change: (
      stored: NonNullable<Awaited<ReturnType<WorkflowStore['readRun']>>>,
    ) => Promise<{ run: WorkflowRun; ops: Parameters<WorkflowStore['writeRun']>[2] }>,
  ): Promise<WorkflowRun> {
    for (let race = 1; ; race++) {
      const stored = await store.readRun(runId);
      if (!stored) throw new WorkflowNotFoundError(operation, store.workflow, runId);
      const { run, ops } = await change(stored);
      try {
        await store.writeRun(stored, run, ops, await store.readActive());
        return run;
      } catch (error) {
        const code = registryErrorCode(error);
        if (code === 'NODE_EXISTS' && stored.run.state !== 'RUNNING') {
          const active = await store.readActive();
          if (active && active.runId !== runId)
            throw new InvalidOperationError(
              operation,
              'runId',
              `run ${active.runId} of '${store.workflow}' is under way: one run at a time; wait for it or cancel it`,
            );
        }
        if ((code !== 'BAD_VERSION' && code !== 'NO_NODE' && code !== 'NODE_EXISTS') || race >= RACES) throw error;
      }
    }
  }

  private async store(name: string, operation: string): Promise<WorkflowStore> {
    checkWorkflowNode(name, operation, 'name');
    const store = new WorkflowStore(this.registry, name);
    if (!(await store.readDefinition())) throw new WorkflowNotFoundError(operation, name);
    return store;
  }
}
