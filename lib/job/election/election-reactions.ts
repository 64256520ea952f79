import type { TreeEvent } from '../../registry/tree-cache.js';
import type { JobContext } from '../context/job-context.js';
import { runReaction, type ClusterChangeHandler } from '../context/cluster-change-handler.js';
import { SERVER_DISABLED } from '../server/server.service.js';
import type { LeaderService } from './leader.service.js';

/**
 * ElasticJob's ElectionListenerManager: re-elect when `leader/election/instance` is deleted, or our server is
 * enabled with no leader; abdicate when our server is disabled.
 */
export class ElectionReactions implements ClusterChangeHandler {
  constructor(
    private readonly ctx: JobContext,
    private readonly leader: LeaderService,
  ) {}

  onChange(event: TreeEvent): void {
    const { paths, ip } = this.ctx;
    const canLead = this.leader.mayLead();
    if (event.path === paths.leaderElectionInstance && event.type === 'DELETED' && canLead)
      runReaction(this.ctx, 'leader election', () => this.leader.electAfterLeaderLeft());
    if (paths.serverIpOf(event.path) === ip && event.type !== 'DELETED') {
      if (event.data === SERVER_DISABLED && this.leader.isLeader())
        runReaction(this.ctx, 'abdication', () => this.leader.removeLeader());
      else if (event.data !== SERVER_DISABLED && !this.leader.hasLeader() && canLead)
        runReaction(this.ctx, 'leader election', () => this.leader.electLeader());
    }
  }
}
