import type { TreeEvent } from '../../registry/tree-cache.js';
import type { JobContext } from '../context/job-context.js';
import { runReaction, type ClusterChangeHandler } from '../context/cluster-change-handler.js';

/**
 * ElasticJob's TriggerListenerManager: `trigger/{me}` added → consume it and fire now (queued once if a firing
 * runs), with the job parameter it carries, if any.
 */
export class TriggerReactions implements ClusterChangeHandler {
  constructor(
    private readonly ctx: JobContext,
    /** `jobParameter`: what the trigger node carried, for that run (undefined: the job's own). */
    private readonly onTrigger: (jobParameter: string | undefined) => void,
  ) {}

  onChange(event: TreeEvent): void {
    if (event.path !== this.ctx.paths.trigger(this.ctx.instanceId) || event.type !== 'ADDED') return;
    runReaction(this.ctx, 'manual trigger', async () => {
      // A trigger may carry a job parameter for that run (ours; Java's are empty, and Java ignores the data).
      const carried = await this.ctx.storage.direct.get(event.path);
      await this.ctx.storage.remove(event.path); // consumed by its target
      this.onTrigger(carried === undefined || carried === '' ? undefined : carried);
    });
  }
}
