import type { JobContext } from '../context/job-context.js';
import type { ServerService } from '../server/server.service.js';

/**
 * Leader election (ElasticJob's LeaderService): under the Curator-compatible latch `leader/election/latch`, the
 * first instance to find no `leader/election/instance` writes its id there (ephemeral). The leader is whoever
 * that node names.
 *
 * Handover, and a registration that finds no leader: eligible instances race for the node with one create each,
 * which ZooKeeper makes atomic (one wins, the others get NODE_EXISTS), instead of queueing in the latch first: one
 * round trip instead of three. Whenever the cache shows someone queued in the latch (a Java ElasticJob peer, or
 * one of us electing the slow way), we queue too. The cache may not show a participant that has just entered: a
 * Java peer that finds no leader inside the latch then writes its node with ElasticJob's persistEphemeral, which
 * deletes ours first (docs/reference/elasticjob.md §1.1): one leader still, most often the Java peer, after we
 * logged an election for a moment. Ours among themselves never delete: the latch's winner meets NODE_EXISTS.
 */
export class LeaderService {
  private electing: Promise<void> | undefined;

  constructor(
    private readonly ctx: JobContext,
    private readonly servers: ServerService,
    /** Whether this instance's node is online: only then may it elect itself from a wait. */
    private readonly isLocalInstanceOnline: () => boolean,
  ) {}

  isLeader(): boolean {
    return this.ctx.storage.cached.get(this.ctx.paths.leaderElectionInstance) === this.ctx.instanceId;
  }

  hasLeader(): boolean {
    return this.ctx.storage.cached.has(this.ctx.paths.leaderElectionInstance);
  }

  /** One election at a time per job; concurrent callers share it. */
  electLeader(): Promise<void> {
    this.electing ??= this.runElection().finally(() => {
      this.electing = undefined;
    });
    return this.electing;
  }

  /**
   * An election nobody is likely to be queued for: a registration that found no leader, or the leader node just
   * deleted. Race for the node (see the class comment), or elect through the latch if anyone is queued in it.
   */
  electByRace(occasion = ''): Promise<void> {
    const { storage, paths } = this.ctx;
    if (this.electing || storage.cached.children(paths.leaderElectionLatch).length > 0) return this.electLeader();
    this.electing = this.raceForLeadership(occasion).finally(() => {
      this.electing = undefined;
    });
    return this.electing;
  }

  /** Elects when no leader is cached and this instance may lead. */
  electIfLeaderless(): Promise<void> {
    return this.hasLeader() || !this.mayLead() ? Promise.resolve() : this.electByRace();
  }

  /**
   * Its server enabled and its instance node online: only then may this instance elect itself (on a host running
   * several instances the server, an IP, is available as soon as any of them is).
   */
  mayLead(): boolean {
    return this.servers.isEnableServer(this.ctx.ip) && this.isLocalInstanceOnline();
  }

  /** The leader node was deleted: race for it, or queue behind whoever is in the latch. */
  electAfterLeaderLeft(): Promise<void> {
    return this.electByRace(" on the previous leader's departure");
  }

  private async raceForLeadership(occasion: string): Promise<void> {
    const { storage, paths, instanceId } = this.ctx;
    if (await storage.createEphemeral(paths.leaderElectionInstance, instanceId)) {
      this.ctx.logger.log(`elected leader (${instanceId})${occasion}`);
    }
    await storage.cached.settled();
  }

  private async runElection(): Promise<void> {
    const { storage, paths, instanceId } = this.ctx;
    // ElasticJob checks for the node and then creates it; inside the latch a plain create is the same check in one
    // round trip (it fails with NODE_EXISTS when someone leads), and it goes with the latch's release.
    const elected = await storage.createEphemeralInLatch(
      paths.leaderElectionLatch,
      this.ctx.waitTimeoutMs,
      paths.leaderElectionInstance,
      instanceId,
    );
    if (elected) this.ctx.logger.log(`elected leader (${instanceId})`);
    await storage.cached.settled();
  }

  /**
   * ElasticJob's isLeaderUntilBlock, event-driven and bounded: while there is no leader but some server is
   * available, elect (when ours is available) or wait for the leader node to appear. Then: am I the leader?
   */
  async isLeaderUntilBlock(timeoutMs = this.ctx.waitTimeoutMs): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.hasLeader() && this.servers.hasAvailableServers() && Date.now() < deadline) {
      if (this.mayLead()) await this.electLeader();
      else
        await this.ctx.storage.cached.waitFor(
          () => this.hasLeader() || !this.servers.hasAvailableServers(),
          deadline - Date.now(),
        );
    }
    return this.isLeader();
  }

  /** Deletes the leader node if it is ours (shutdown, abdication), so a peer takes over at once. */
  async removeLeader(): Promise<void> {
    const { storage, paths, instanceId } = this.ctx;
    if ((await storage.direct.get(paths.leaderElectionInstance)) === instanceId) {
      await storage.remove(paths.leaderElectionInstance);
      this.ctx.logger.log('gave up leadership');
    }
  }
}
