import type { TreeEvent } from '../../registry/tree-cache.js';
import type { JobContext } from '../context/job-context.js';
import { runReaction, type ClusterChangeHandler } from '../context/cluster-change-handler.js';

/** What `rerun/{instanceId}` may hold: item numbers, comma-separated (`2` or `2,5`). */
const ITEMS = /^\d{1,9}(,\d{1,9})*$/;

/**
 * This library's rerun (docs/operations/operator-api.md, "Running items again"): `rerun/{me}` added → consume it and
 * run its items again now (queued once if a firing runs), as a manual trigger limited to them. A node that does not
 * hold item numbers is deleted with a warning naming it, never half-read.
 */
export class RerunReactions implements ClusterChangeHandler {
  constructor(
    private readonly ctx: JobContext,
    private readonly onRerun: (items: number[]) => void,
  ) {}

  onChange(event: TreeEvent): void {
    if (event.path !== this.ctx.paths.rerun(this.ctx.instanceId) || event.type !== 'ADDED') return;
    runReaction(this.ctx, 'rerun', async () => {
      const held = (await this.ctx.storage.direct.get(event.path)) ?? '';
      await this.ctx.storage.remove(event.path); // consumed by its target
      if (!ITEMS.test(held)) {
        this.ctx.logger.warn(
          `${this.ctx.storage.fullPath(event.path)} holds '${held.slice(0, 40)}', not item numbers (2,5): deleted, ` +
            'nothing rerun',
        );
        return;
      }
      this.onRerun([...new Set(held.split(',').map(Number))]);
    });
  }
}
