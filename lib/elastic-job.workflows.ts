import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleDestroy,
} from '@nestjs/common';
import { ELASTIC_JOB_MODULE_OPTIONS } from './elastic-job.module-definition.js';
import { ElasticJobOrchestrator } from './elastic-job.orchestrator.js';
import { describeError } from './errors/elastic-job.errors.js';
import { ElasticJobEventBus } from './events/elastic-job-event-bus.js';
import type { WorkflowEvent } from './events/elastic-job-event.types.js';
import type { ElasticJobModuleOptions } from './interfaces/module-options.interface.js';
import { buildInstanceId } from './job/paths.js';
import type { RegistryCenter } from './registry/registry-center.js';
import { WorkflowCoordinator } from './workflow/workflow-coordinator.js';
import { WorkflowRecorder } from './workflow/workflow-recorder.js';
import type { WorkflowRun, WorkflowTransition } from './workflow/workflow-run.js';
import { validateWorkflowOptions } from './workflow/workflow-validation.js';

/**
 * The module's workflows on this instance (docs/guide/workflows.md): a coordinator per workflow (the one holding the
 * workflow's leader node moves its runs on) and the recorder of the steps' item outcomes, on the jobs' session.
 * Started beside the jobs at bootstrap; without ZooKeeper then, at its first connection.
 */
@Injectable()
export class ElasticJobWorkflows implements OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown {
  private readonly logger = new Logger('ElasticJob:workflow');
  private readonly coordinators = new Map<string, WorkflowCoordinator>();
  private recorder: WorkflowRecorder | undefined;
  private closed = false;
  private unsubscribe: (() => void) | undefined;

  constructor(
    @Inject(ELASTIC_JOB_MODULE_OPTIONS) private readonly options: ElasticJobModuleOptions,
    private readonly orchestrator: ElasticJobOrchestrator,
    private readonly eventBus: ElasticJobEventBus,
  ) {}

  /** Why a workflow could not start here, by name (the health indicator reports it). */
  private readonly failures = new Map<string, string>();

  /**
   * Each workflow of the module on this instance: whether its coordinator started (it has when ZooKeeper answered),
   * whether this instance coordinates it now, and why it could not start.
   */
  status(): Record<string, { started: boolean; isLeader: boolean; error?: string }> {
    const result: Record<string, { started: boolean; isLeader: boolean; error?: string }> = {};
    for (const [name, coordinator] of this.coordinators) {
      const error = this.failures.get(name);
      result[name] = { started: coordinator.isStarted, isLeader: coordinator.isLeader, ...(error ? { error } : {}) };
    }
    return result;
  }

  async onApplicationBootstrap(): Promise<void> {
    const workflows = validateWorkflowOptions(this.options?.workflows);
    if (workflows.length === 0 || !this.orchestrator.enabled || this.orchestrator.definitions.length === 0) return;
    const workflowOf = new Map(workflows.flatMap((w) => Object.keys(w.steps).map((step) => [step, w.name] as const)));
    // Subscribed before any item can run (jobs register after the session connects): events wait for the recorder.
    let ready!: (recorder: WorkflowRecorder) => void;
    const recorder = new Promise<WorkflowRecorder>((resolve) => (ready = resolve));
    this.unsubscribe = this.eventBus.on('the workflows', async (event) => (await recorder).onEvent(event), {
      types: ['item.started', 'item.completed'],
      jobs: [...workflowOf.keys()],
    });
    const registry = await this.orchestrator.operatorRegistry();
    const { ip, pid } = this.orchestrator.instanceIdentity();
    const instanceId = buildInstanceId(ip, pid);
    this.recorder = new WorkflowRecorder(registry, workflowOf, instanceId);
    ready(this.recorder);
    for (const workflow of workflows)
      this.coordinators.set(
        workflow.name,
        new WorkflowCoordinator(registry, workflow, instanceId, (run, transition) =>
          this.publish(instanceId, run, transition),
        ),
      );
    // Started before bootstrap ends when ZooKeeper answers (a trigger right after finds the workflow there).
    const timeoutMs = this.orchestrator.registryCenter?.settings.connectionTimeoutMilliseconds ?? 15_000;
    if (registry.isConnected() || (await registry.waitForConnection(timeoutMs))) await this.startAll();
    else this.startWhenConnected(registry);
  }

  private async startAll(): Promise<void> {
    await Promise.all(
      [...this.coordinators.values()].map((coordinator) =>
        coordinator.start().catch((error: unknown) => {
          this.failures.set(coordinator.workflow.name, describeError(error));
          this.logger.error(
            `workflow '${coordinator.workflow.name}' could not start: ${describeError(error)}; restart the app`,
          );
        }),
      ),
    );
  }

  /** Without ZooKeeper at bootstrap, the coordinators start at the first connection (it never fails the app). */
  private startWhenConnected(registry: RegistryCenter): void {
    let started = false;
    const start = (): void => {
      if (started || this.closed) return;
      started = true;
      off();
      void this.startAll();
    };
    const off = registry.onStateChange(
      (change) => (change.state === 'CONNECTED' || change.state === 'RECONNECTED') && start(),
    );
    if (registry.isConnected()) start();
  }

  private publish(instanceId: string, run: WorkflowRun, transition: WorkflowTransition): void {
    const base = { instanceId, at: new Date(), workflow: run.workflow, runId: run.id };
    const events: WorkflowEvent[] = [];
    if (transition.type === 'step.started') {
      // The run's roots start together in its first move: the first of them by name tells the run's start.
      if (transition.attempt === 1 && this.firstRoot(run, transition.step))
        events.push({ ...base, type: 'workflow.run.started', jobName: run.workflow });
      events.push({
        ...base,
        type: 'workflow.step.started',
        jobName: transition.step,
        step: transition.step,
        items: transition.items,
      });
    } else if (transition.type === 'step.completed')
      events.push({ ...base, type: 'workflow.step.completed', jobName: transition.step, step: transition.step });
    else if (transition.type === 'step.failed')
      events.push({
        ...base,
        type: 'workflow.step.failed',
        jobName: transition.step,
        step: transition.step,
        items: transition.failedItems,
      });
    else events.push({ ...base, type: `workflow.${transition.type}`, jobName: run.workflow });
    for (const event of events) this.eventBus.publish(event);
  }

  /** The first root step by name: the run's start is told once, with it. */
  private firstRoot(run: WorkflowRun, step: string): boolean {
    return (
      Object.keys(run.steps)
        .filter((name) => run.steps[name]!.parents.length === 0)
        .sort()[0] === step
    );
  }

  /** The coordinators stop (the next leader takes over at once); items draining meanwhile are still recorded. */
  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.coordinators.values()].map((coordinator) => coordinator.close()));
  }

  onApplicationShutdown(): void {
    this.closed = true;
    this.unsubscribe?.();
    this.recorder?.close();
  }
}
