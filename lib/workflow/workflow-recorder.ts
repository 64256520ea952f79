import { Logger } from '@nestjs/common';
import { describeError, isConnectionTrouble } from '../errors/elastic-job.errors.js';
import type { ElasticJobEvent } from '../events/elastic-job-event.types.js';
import type { RegistryCenter } from '../registry/registry-center.js';
import type { ItemOutcome } from './workflow-run.js';
import { WorkflowStore } from './workflow-store.js';

/** An item's record is retried this many times across connection trouble before it is given up (and logged). */
const RECORD_ATTEMPTS = 10;

interface Binding {
  runId: string;
  attempt: number;
}

/**
 * Every instance records what the items it runs of a workflow's steps did, in the run's node
 * (`runs/{runId}/{step}/{item}`): the coordinator, wherever it is, learns from them when every item of a step has
 * succeeded across the cluster. An item belongs to the run whose step is RUNNING with that item when the item
 * starts (read from ZooKeeper after the trigger that started it: the trigger and the run's move were one
 * transaction); an item that starts when no run has its step running (a trigger by hand) is no run's. Items taken
 * over by failover or run again by a misfire are recorded like any other.
 */
export class WorkflowRecorder {
  private readonly logger = new Logger('ElasticJob:workflow');
  private readonly bindings = new Map<string, Promise<Binding | undefined>>();
  private readonly stores = new Map<string, WorkflowStore>();
  /** Each workflow's run items were last bound to. */
  private readonly lastRunIds = new Map<string, string>();
  private closed = false;

  constructor(
    private readonly registry: RegistryCenter,
    /** Each step's workflow. */
    private readonly workflowOf: ReadonlyMap<string, string>,
    private readonly instanceId: string,
  ) {
    for (const workflow of new Set(workflowOf.values()))
      this.stores.set(workflow, new WorkflowStore(registry, workflow, (message) => this.logger.warn(message)));
  }

  /** The jobs it listens to (the event bus filter). */
  get steps(): string[] {
    return [...this.workflowOf.keys()];
  }

  close(): void {
    this.closed = true;
    this.bindings.clear();
  }

  /** Called with the `item.started` and `item.completed` events of the steps' jobs; resolves once recorded. */
  async onEvent(event: ElasticJobEvent): Promise<void> {
    const workflow = this.workflowOf.get(event.jobName);
    if (!workflow || this.closed) return;
    if (event.type === 'item.started') {
      const binding = this.bind(workflow, event.jobName, event.shardingItem);
      binding.catch(() => undefined);
      this.bindings.set(event.id, binding);
      return;
    }
    if (event.type !== 'item.completed') return;
    const binding = await (this.bindings.get(event.id) ?? this.bind(workflow, event.jobName, event.shardingItem));
    this.bindings.delete(event.id);
    if (!binding) return;
    const outcome: ItemOutcome = {
      ok: event.success,
      instanceId: this.instanceId,
      at: event.completeTime.toISOString(),
      attempt: binding.attempt,
      ...(event.failureCause === undefined ? {} : { cause: event.failureCause.slice(0, 2000) }),
    };
    await this.record(workflow, binding.runId, event.jobName, event.shardingItem, outcome);
  }

  /** The run whose step is running this item now, read straight from ZooKeeper. */
  private async bind(workflow: string, step: string, item: number): Promise<Binding | undefined> {
    const store = this.stores.get(workflow)!;
    for (let attempt = 1; ; attempt++) {
      try {
        // The run last bound to is read beside the `active` node (sent after it: never older than it), usually the
        // one it names: one round trip, on the way from a parent's last item to its child's first.
        const guess = this.lastRunIds.get(workflow);
        const [active, guessed] = await Promise.all([
          store.readActive(),
          guess === undefined ? undefined : store.readRun(guess),
        ]);
        if (!active) return undefined;
        this.lastRunIds.set(workflow, active.runId);
        const stored = active.runId === guess ? guessed : await store.readRun(active.runId);
        const running = stored?.run.steps[step];
        if (!stored || stored.run.state !== 'RUNNING' || running?.state !== 'RUNNING') return undefined;
        if (running.items && !running.items.includes(item)) return undefined;
        return { runId: stored.run.id, attempt: running.attempts };
      } catch (error) {
        if (!isConnectionTrouble(error) || attempt >= RECORD_ATTEMPTS || this.closed) throw error;
        await this.registry.waitForConnection(this.registry.sessionTimeoutMs);
      }
    }
  }

  private async record(
    workflow: string,
    runId: string,
    step: string,
    item: number,
    outcome: ItemOutcome,
  ): Promise<void> {
    const store = this.stores.get(workflow)!;
    for (let attempt = 1; ; attempt++) {
      try {
        if (!(await store.recordOutcome(runId, step, item, outcome)))
          this.logger.warn(`step '${step}' item ${item}: run ${runId} is gone (deleted), outcome not recorded`);
        return;
      } catch (error) {
        if (!isConnectionTrouble(error) || attempt >= RECORD_ATTEMPTS || this.closed) {
          this.logger.error(
            `step '${step}' item ${item} of run ${runId}: its outcome could not be recorded (${describeError(error)}); ` +
              `the step waits for it: cancel the run and trigger a new one`,
          );
          return;
        }
        await this.registry.waitForConnection(this.registry.sessionTimeoutMs);
      }
    }
  }
}
