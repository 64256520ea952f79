import { describeError } from '../../errors/elastic-job.errors.js';
import type { ShardingContexts } from '../../interfaces/job-listener.interface.js';
import type { JobConfiguration } from '../config/job-configuration.js';
import { toExecutionSource } from '../events/job-event-publisher.js';
import type { JobContext } from '../context/job-context.js';
import { buildTaskId } from '../paths.js';
import { parseShardingItemParameters } from '../config/sharding-item-parameters.js';
import type { FiringHooks } from '../events/execution-events.js';
import type { FiringSource } from '../events/firing-state.js';

/**
 * The hooks awaited around every firing that runs items (the seam of job listeners), as ElasticJob calls job
 * listeners: once per firing, on every instance, also with no item; the after hooks also when the run throws.
 */
export class FiringHookRunner {
  /** Made when the first hooks are added: most jobs have none (an empty Set is ~150 bytes a job). */
  private hooks: Set<FiringHooks> | undefined;

  constructor(private readonly ctx: JobContext) {}

  /** Returns the call that removes them. */
  add(hooks: FiringHooks): () => void {
    const all = (this.hooks ??= new Set());
    all.add(hooks);
    return () => all.delete(hooks);
  }

  /**
   * Runs `run` (the items of a firing and its catch-up runs) between the before and the after hooks. Without hooks
   * (most jobs), `run()`'s own promise, without an async frame around it (issue 43).
   */
  around(
    items: number[],
    config: JobConfiguration,
    source: FiringSource,
    stopped: () => boolean,
    run: () => Promise<void>,
  ): Promise<void> {
    if (!this.hooks || this.hooks.size === 0) return run();
    return this.aroundHooks(items, config, source, stopped, run);
  }

  private async aroundHooks(
    items: number[],
    config: JobConfiguration,
    source: FiringSource,
    stopped: () => boolean,
    run: () => Promise<void>,
  ): Promise<void> {
    const taskId = buildTaskId(this.ctx.jobName, items, this.ctx.instanceId);
    const contexts = this.shardingContexts(taskId, items, config, source);
    await this.runHooks('beforeFiring', contexts);
    let success = false;
    try {
      // The before hooks may have waited (a distribute-once round): stopped meanwhile, nothing starts.
      if (stopped()) this.ctx.logger.log('stopped while the job listeners ran: the firing starts no item');
      else await run();
      success = !stopped();
    } finally {
      await this.runHooks('afterFiring', contexts, { success });
    }
  }

  /** What job listeners are told about a run of items. */
  private shardingContexts(
    taskId: string,
    items: number[],
    config: JobConfiguration,
    source: FiringSource,
  ): ShardingContexts {
    const parameters = parseShardingItemParameters(config.shardingItemParameters);
    return {
      taskId,
      jobName: this.ctx.jobName,
      shardingTotalCount: config.shardingTotalCount,
      jobParameter: config.jobParameter,
      shardingItemParameters: Object.fromEntries(
        items.map((item) => [item, (typeof parameters === 'string' ? undefined : parameters.get(item)) ?? '']),
      ),
      shardingItems: items,
      source: toExecutionSource(source),
    };
  }

  /** Awaits each hook in turn; one that throws is logged and the firing goes on. */
  private async runHooks(
    name: 'beforeFiring' | 'afterFiring',
    contexts: ShardingContexts,
    outcome: { success: boolean } = { success: true },
  ): Promise<void> {
    for (const hooks of [...(this.hooks ?? [])]) {
      try {
        if (name === 'beforeFiring') await hooks.beforeFiring?.(contexts);
        else await hooks.afterFiring?.(contexts, outcome);
      } catch (error) {
        this.ctx.logger.warn(`${name} hook failed: ${describeError(error)}`);
      }
    }
  }
}
