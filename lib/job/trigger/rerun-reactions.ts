import { registryErrorCode } from '../../errors/elastic-job.errors.js';
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
    /** With the node's zxid: where the ask stands in ZooKeeper's order (job-executor.ts, rerun()). */
    private readonly onRerun: (items: number[], askedZxid: bigint) => void,
  ) {}

  onChange(event: TreeEvent): void {
    if (event.path !== this.ctx.paths.rerun(this.ctx.instanceId) || event.type !== 'ADDED') return;
    runReaction(this.ctx, 'rerun', async () => {
      // Consumed by its target, at the version read: items an operator adds meanwhile change the version, and are
      // read on the next attempt rather than deleted unseen.
      let held: string | undefined;
      let askedZxid = 0n;
      for (let attempt = 1; held === undefined; attempt++) {
        const node = await this.ctx.storage.direct.node(event.path);
        if (node === undefined) return; // consumed already
        try {
          await this.ctx.storage.transaction([{ op: 'remove', path: event.path, version: node.stat.version }]);
          held = node.data.toString('utf8');
          askedZxid = node.stat.mzxid;
        } catch (error) {
          const code = registryErrorCode(error);
          if (code === 'NO_NODE') return;
          if (code !== 'BAD_VERSION' || attempt >= 5) throw error;
        }
      }
      if (!ITEMS.test(held)) {
        this.ctx.logger.warn(
          `${this.ctx.storage.fullPath(event.path)} holds '${held.slice(0, 40)}', not item numbers (2,5): deleted, ` +
            'nothing rerun',
        );
        return;
      }
      this.onRerun([...new Set(held.split(',').map(Number))], askedZxid);
    });
  }
}
