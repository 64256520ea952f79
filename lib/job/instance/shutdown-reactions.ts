import type { TreeEvent } from '../../registry/tree-cache.js';
import type { JobContext } from '../context/job-context.js';
import { runReaction, type ClusterChangeHandler } from '../context/cluster-change-handler.js';
import type { InstanceService } from './instance.service.js';

/**
 * ElasticJob's ShutdownListenerManager: `instances/{me}` deleted (by an operator, or by our session's end: the
 * scheduler tells which) → what that means is decided by the registration's healing.
 */
export class ShutdownReactions implements ClusterChangeHandler {
  constructor(
    private readonly ctx: JobContext,
    private readonly instances: InstanceService,
    private readonly onOwnInstanceDeleted: () => Promise<void>,
  ) {}

  onChange(event: TreeEvent): void {
    const { paths } = this.ctx;
    // Before the instance check below runs (it awaits a read): a deletion of the whole directory is known to it.
    if (event.path === paths.instances && event.type === 'DELETED') this.instances.onDirectoryDeleted();
    if (event.path === paths.instance(this.ctx.instanceId) && event.type === 'DELETED')
      runReaction(this.ctx, 'instance node check', () => this.onOwnInstanceDeleted());
  }
}
