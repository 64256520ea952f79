import type { TreeEvent } from '../../registry/tree-cache.js';
import type { ConfigService } from '../config/config.service.js';
import type { LeaderService } from '../election/leader.service.js';
import type { JobContext } from '../context/job-context.js';
import { runReaction, type ClusterChangeHandler } from '../context/cluster-change-handler.js';
import type { ShardingService } from './sharding.service.js';

/**
 * ElasticJob's ShardingListenerManager: flag resharding when instances join or leave, a server changes,
 * `shardingTotalCount` changes, or this instance becomes the leader.
 */
export class ShardingReactions implements ClusterChangeHandler {
  private lastTotal: number;
  /**
   * While a registration runs it writes our server, instance and (maybe) leader nodes, then sets the resharding
   * flag itself once, when they are all written: reacting to each of them too would set it three more times (a
   * write each, per job, at every start-up). Changes by others are reacted to as always.
   */
  private registering = false;
  /** Leaderships gained while registering, whose reaction (flag resharding) was left to the registration. */
  private leadershipsWhileRegistering = 0;

  constructor(
    private readonly ctx: JobContext,
    private readonly config: ConfigService,
    private readonly leader: LeaderService,
    private readonly sharding: ShardingService,
  ) {
    this.lastTotal = config.load().shardingTotalCount;
  }

  start(registering: boolean): void {
    this.lastTotal = this.config.load().shardingTotalCount;
    this.registering = registering;
    this.leadershipsWhileRegistering = 0;
  }

  /**
   * The registration has set the resharding flag (or left it to the leader): react to our own nodes again, and do
   * what the reactions left to it would have done beyond that flag. Setting the flag waits for a leader, electing
   * one when we may: if the leader went while we registered (seen gone before our instance node, so not elected
   * then), nobody else would elect. And a leadership lost and gained again while registering may have followed a
   * peer's resharding that took the registration's flag: flag again.
   */
  registered(): void {
    const regained = this.leadershipsWhileRegistering > 1;
    this.registering = false;
    this.leadershipsWhileRegistering = 0;
    const leaderless = !this.leader.hasLeader();
    if ((leaderless || regained) && !this.sharding.isStaticallySharded(this.config.load()))
      runReaction(this.ctx, 'resharding flag', () => this.sharding.setReshardingFlag());
    // A static job is not resharded, so no flag elects for it: elect as the registration would have.
    else if (leaderless) runReaction(this.ctx, 'leader election', () => this.leader.electIfLeaderless());
  }

  onChange(event: TreeEvent): void {
    const { paths, ip } = this.ctx;
    const serverIp = paths.serverIpOf(event.path);
    const membershipChanged =
      (paths.instanceIdOf(event.path) !== undefined && event.type !== 'UPDATED') || serverIp !== undefined;
    // A new leader reshards too: the instance that left may have been seen leaving while the old leader's node
    // was still there, so nobody flagged it (ElasticJob leaves that to its 10-minute reconcile).
    const becameLeader =
      event.path === paths.leaderElectionInstance && event.type === 'ADDED' && event.data === this.ctx.instanceId;
    const ownNode = serverIp === ip || event.path === paths.instance(this.ctx.instanceId) || becameLeader;
    if (becameLeader && this.registering) this.leadershipsWhileRegistering++;
    if (
      (membershipChanged || becameLeader) &&
      !(this.registering && ownNode) &&
      !this.sharding.isStaticallySharded(this.config.load())
    )
      runReaction(this.ctx, 'resharding flag', () => this.sharding.setReshardingFlag());
    if (event.path === paths.config && event.type !== 'DELETED') {
      const total = this.config.load().shardingTotalCount;
      if (total !== this.lastTotal) {
        this.ctx.logger.log(`shardingTotalCount changed ${this.lastTotal} → ${total}: resharding`);
        runReaction(this.ctx, 'resharding flag', () => this.sharding.setReshardingFlag());
      }
      this.lastTotal = total;
    }
  }
}
