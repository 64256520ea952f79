import { describeNextFirings } from '../../schedule/cron-preview.js';
import type { TreeEvent } from '../../registry/tree-cache.js';
import type { ConfigService } from '../config/config.service.js';
import type { JobConfiguration } from '../config/job-configuration.js';
import type { LeaderService } from '../election/leader.service.js';
import type { ExecutionService } from '../execution/execution.service.js';
import type { FailoverService } from '../failover/failover.service.js';
import type { InstanceService } from '../instance/instance.service.js';
import type { JobContext } from '../job-context.js';
import { SERVER_DISABLED, type ServerService } from '../server/server.service.js';
import type { ShardingService } from '../sharding/sharding.service.js';
import { describeError } from '../../errors/elastic-job.errors.js';

/**
 * How this instance reacts to changes in the job's tree: ElasticJob's listener catalogue (its ListenerManager
 * classes, `kernel/internal/{concern}/{Name}ListenerManager.java` in ElasticJob's source) over the job's TreeCache
 * events.
 * (Not the job listeners that run before and after a firing.)
 * - election: re-elect when `leader/election/instance` is deleted, or our server is enabled with no leader;
 *   abdicate when our server is disabled;
 * - sharding: flag resharding when instances join or leave, a server changes, `shardingTotalCount` changes, or
 *   this instance becomes the leader;
 * - config: reschedule when the cron or time zone changes; drop markers when monitorExecution or failover is
 *   switched off;
 * - failover: flag the items a crashed instance was running, and claim them when idle;
 * - trigger: `trigger/{me}` added → consume it and fire now (queued once if a firing runs);
 * - shutdown: `instances/{me}` deleted while our session lives → an operator's shutdown of the job here.
 * Reactions run concurrently (each is single-flight or idempotent) so that none waits behind another.
 */
export class ClusterChangeReactions {
  private unsubscribe: (() => void) | undefined;
  private lastConfig: JobConfiguration;
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
    private readonly servers: ServerService,
    private readonly instances: InstanceService,
    private readonly sharding: ShardingService,
    private readonly failover: FailoverService,
    private readonly execution: ExecutionService,
    private readonly hooks: {
      onScheduleChange: (config: JobConfiguration) => void;
      /** `jobParameter`: what the trigger node carried, for that run (undefined: the job's own). */
      onTrigger: (jobParameter: string | undefined) => void;
      onFailoverWaiting: () => Promise<void>;
      /** `instances/{me}` deleted (by an operator, or by our session's end: the scheduler tells which). */
      onOwnInstanceDeleted: () => Promise<void>;
    },
  ) {
    this.lastConfig = config.load();
  }

  start(options: { registering?: boolean } = {}): void {
    this.lastConfig = this.config.load();
    this.registering = options.registering ?? false;
    this.leadershipsWhileRegistering = 0;
    this.unsubscribe ??= this.ctx.storage.cached.listen((event) => this.dispatch(event));
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
    if ((!this.leader.hasLeader() || regained) && !this.sharding.isStaticallySharded(this.config.load()))
      this.run('resharding flag', () => this.sharding.setReshardingFlag());
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  private dispatch(event: TreeEvent): void {
    const { paths, ip } = this.ctx;
    // Only an instance that is itself online may take part: on a host running several instances the server
    // (an IP) is available as soon as any of them is.
    const canLead = this.servers.isEnableServer(ip) && this.instances.isLocalInstanceOnline();
    if (event.path === paths.leaderElectionInstance && event.type === 'DELETED' && canLead) {
      this.run('leader election', () => this.leader.electAfterLeaderLeft());
    }
    const serverIp = paths.serverIpOf(event.path);
    if (serverIp === ip && event.type !== 'DELETED') {
      if (event.data === SERVER_DISABLED && this.leader.isLeader())
        this.run('abdication', () => this.leader.removeLeader());
      else if (event.data !== SERVER_DISABLED && !this.leader.hasLeader() && canLead)
        this.run('leader election', () => this.leader.electLeader());
    }
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
      this.run('resharding flag', () => this.sharding.setReshardingFlag());
    if (event.path === paths.config && event.type !== 'DELETED') this.onConfigChanged();
    // Before the instance check below runs (it awaits a read): a deletion of the whole directory is known to it.
    if (event.path === paths.instances && event.type === 'DELETED') this.instances.onDirectoryDeleted();
    if (event.path === paths.instance(this.ctx.instanceId) && event.type === 'DELETED') {
      this.run('instance node check', () => this.hooks.onOwnInstanceDeleted());
    }
    const crashed = paths.instanceIdOf(event.path);
    if (
      crashed !== undefined &&
      crashed !== this.ctx.instanceId &&
      event.type === 'DELETED' &&
      this.config.load().failover
    ) {
      this.run('failover', async () => {
        if (await this.failover.onInstanceCrashed(crashed, this.config.load())) await this.hooks.onFailoverWaiting();
      });
    }
    if (event.type === 'ADDED' && event.path.startsWith(`${paths.failoverItems}/`) && this.config.load().failover) {
      this.run('failover', () => this.hooks.onFailoverWaiting());
    }
    if (event.path === paths.trigger(this.ctx.instanceId) && event.type === 'ADDED') {
      this.run('manual trigger', async () => {
        // A trigger may carry a job parameter for that run (ours; Java's are empty, and Java ignores the data).
        const carried = await this.ctx.storage.direct.get(event.path);
        await this.ctx.storage.remove(event.path); // consumed by its target
        this.hooks.onTrigger(carried === undefined || carried === '' ? undefined : carried);
      });
    }
  }

  private onConfigChanged(): void {
    const previous = this.lastConfig;
    const current = this.config.load();
    this.lastConfig = current;
    if (current.shardingTotalCount !== previous.shardingTotalCount) {
      this.ctx.logger.log(
        `shardingTotalCount changed ${previous.shardingTotalCount} → ${current.shardingTotalCount}: resharding`,
      );
      this.run('resharding flag', () => this.sharding.setReshardingFlag());
    }
    if (previous.monitorExecution && !current.monitorExecution) {
      this.ctx.logger.log('monitorExecution switched off: removing running markers');
      this.run('running marker removal', () => this.execution.removeAllRunningMarkers(current.shardingTotalCount));
    }
    if (previous.failover && !current.failover) {
      this.ctx.logger.log('failover switched off: removing failover markers');
      this.run('failover marker removal', () => this.failover.removeFailoverInfo(current.shardingTotalCount));
    }
    if (current.cron !== previous.cron || current.timeZone !== previous.timeZone) {
      this.ctx.logger.log(
        current.cron === ''
          ? 'cron removed: the job now runs only when triggered'
          : `cron changed to '${current.cron}': rescheduling; next firings ` +
              describeNextFirings(current.cron, current.timeZone),
      );
      this.hooks.onScheduleChange(current);
    }
  }

  private run(what: string, action: () => Promise<void>): void {
    void action().catch((error: unknown) => this.ctx.logger.warn(`${what} failed: ${describeError(error)}`));
  }
}
