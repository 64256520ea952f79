import {
  describeError,
  JobConfigurationError,
  JobConflictError,
  registryErrorCode,
} from '../../errors/elastic-job.errors.js';
import { describeNextFirings } from '../../schedule/cron-preview.js';
import { SERVER_DISABLED, SERVER_ENABLED } from '../server/server.service.js';
import { healthOf, isRegistered, type JobLifecycleHolder } from './job-lifecycle.js';
import type { JobServices } from './job-services.js';
import type { RetryPolicy } from './retry-policy.js';

/** How the registration stops the job when the cluster says so (the scheduler's teardown). */
export interface RegistrationStops {
  /** An operator deleted this instance's node, or the job's tree: the job stops here (an operator's teardown). */
  stopByOperator(reason: string): Promise<void>;
  /** The stop's reason told again: the job's config node went after its instance node. */
  retell(reason: string): void;
}

/**
 * A job's registration in ZooKeeper and its healing (ElasticJob's SetUpFacade.registerStartUpInfo and the
 * re-registration after a new session): the first registration, retried per the job's RetryPolicy; the
 * re-registration on every new session; reconcile's look at this instance's own nodes; and what an operator's
 * deletion of them means. Every step moves the job's lifecycle (job-lifecycle.ts) and acts on where it is.
 */
export class JobRegistration {
  constructor(
    private readonly services: JobServices,
    private readonly lifecycle: JobLifecycleHolder,
    private readonly retry: RetryPolicy,
    private readonly stops: RegistrationStops,
  ) {}

  /** Resolves after the first attempt; throws only what no retry can mend (a name conflict, a bad configuration). */
  async register(): Promise<void> {
    if (this.lifecycle.current.kind !== 'latent') return;
    this.lifecycle.move({ type: 'register' });
    const { ctx, executor } = this.services;
    const unsubscribes = [
      ctx.connection.onNewSession(() => this.reRegister()),
      ctx.connection.onStateChange((change) => {
        const registered = isRegistered(this.lifecycle.current);
        // Another instance may take our items over once the session is gone: tell the handlers.
        // Registered: nothing starts until re-registered on the new session (our cache may show items that peers
        // take over meanwhile). Still registering: that registration runs on the new session.
        if (change.state === 'LOST' && registered) {
          executor.sessionLost();
          ctx.events.publish('session.lost', {});
        } else if (change.state === 'LOST') executor.abortAll('ZooKeeper session lost');
        // Same session: go on at once. A new session: after re-registration (see tryReRegistration).
        if (change.state === 'RECONNECTED' && !change.newSession && registered) executor.catchUpAfterReconnect();
      }),
    ];
    this.lifecycle.onStop(() => unsubscribes.forEach((unsubscribe) => unsubscribe()));
    if (!(await this.tryRegistration()))
      this.retry.inBackground(
        'registration',
        () => this.tryRegistration(),
        () => this.failing('registering'),
      );
  }

  /** Reads only: fails with JobConflictError when another method owns the job name in ZooKeeper. */
  checkConflict(): Promise<void> {
    // Connection trouble is retried as registration's is; a conflict is thrown at once. The job's cache reads the
    // tree (the root's owner with it) once for the check and the registration after it.
    return this.retry.quickly('conflict check', async () => {
      await this.services.ctx.storage.startCache();
      this.services.config.checkConflict();
    });
  }

  /** Why the lifecycle is still failing in `kind`, or undefined when it is not (any more): the background loop's test. */
  private failing(kind: 'registering' | 'rejoining'): string | undefined {
    const state = this.lifecycle.current;
    return state.kind === kind ? healthOf(state).lastError : undefined;
  }

  /** One registration (with its quick retries). False when it failed and may be retried; cleans up after itself. */
  private async tryRegistration(): Promise<boolean> {
    if (this.lifecycle.current.kind !== 'registering') return true;
    const { ctx, config, reactions, leader, servers, instances, sharding, failover } = this.services;
    try {
      await this.retry.quickly('registration', async () => {
        // The cache first: the set-up is planned from it, and our own writes reach it without reads.
        await ctx.storage.startCache();
        await config.setUp();
        reactions.start({ registering: true });
        // ElasticJob enters the election latch only to find, inside it, whether someone leads; the cache (read after
        // our watch was in place) already says so. Entering anyway queued every starting peer behind the others in
        // each job's latch, a chain of round trips that staggered their joins by seconds. With no leader, peers
        // race for the node with one create each (in the instance's own transaction when it is new), unless someone
        // is queued in the latch (a Java ElasticJob peer): a new job's latch container and node, five requests and
        // four watch events, are not made at all. The leader node is written with or after our instance node, never
        // before: an attempt that fails at the instance (and is retried) never shows peers a leader that is not
        // there. A leader that leaves meanwhile is elected again by registered() below.
        const announced = await this.announceNewInstance();
        if (announced === undefined) {
          await servers.persistOnline(!config.load().disabled);
          await instances.persistOnline();
        }
        // Not elected with our nodes: now that they are there (cached), race if nobody leads and we may lead.
        if (!announced?.elected) {
          await ctx.storage.cached.settled();
          await leader.electIfLeaderless();
        }
        await ctx.storage.cached.settled();
        await servers.removeOfflineServers();
        if (leader.isLeader() && !announced?.flagged) await sharding.setReshardingFlag();
        reactions.registered();
        if (config.load().failover) await failover.recoverLegacyCrashedItems(config.load());
      });
    } catch (error) {
      // Half-registered is worse than absent: a leader that never fires would stall its peers.
      reactions.stop();
      await leader.removeLeader().catch(() => undefined);
      await instances.removeInstance().catch(() => undefined);
      // What no retry can mend: a conflict, a bad configuration, a request ZooKeeper would refuse whatever happens.
      const permanent =
        error instanceof JobConflictError ||
        error instanceof JobConfigurationError ||
        registryErrorCode(error) === 'REQUEST_TOO_LARGE';
      this.lifecycle.move({ type: 'registration-failed', error, permanent });
      if (permanent) throw error;
      return false;
    }
    // Shut down meanwhile: the stop has taken over.
    if (this.lifecycle.move({ type: 'registered' }).kind !== 'registered') return true;
    this.startFiring();
    return true;
  }

  /** Registered: the firing loop and the services that run beside it start. */
  private startFiring(): void {
    const { ctx, config, trigger, reconcile, coordinationEvents, executor, cronReading, sharding } = this.services;
    const { cron, timeZone } = config.load();
    trigger.reschedule(cron, timeZone);
    trigger.start();
    // The leader shards now, not at the first firing (ShardingService.shardEarly).
    void sharding
      .shardEarly(config.load())
      .catch((error: unknown) => ctx.logger.warn(`early sharding failed (the next firing shards): ${String(error)}`));
    reconcile.start();
    coordinationEvents.start();
    void executor
      .failoverIfNecessary()
      .catch((error: unknown) => ctx.logger.warn(`failover claim failed: ${String(error)}`));
    ctx.logger.log(
      `registered as ${ctx.instanceId}; ` +
        (cron === '' ? 'one-off: runs when triggered' : `next firings ${describeNextFirings(cron, timeZone)}`) +
        (cronReading?.cron === cron ? `; ${cronReading.note}` : ''),
    );
  }

  /**
   * ElasticJob writes `servers/{ip}`, `instances/{id}` and (the leader) the resharding flag one request each. When
   * the cache shows none of them (a new job, or the first instance on this IP after a clean stop) they go in one
   * transaction: two requests, and their watch events, fewer per job at start-up. Undefined, with nothing written,
   * when the cache shows any of them or ZooKeeper disagrees with it: the step-by-step way then runs.
   */
  private async announceNewInstance(): Promise<{ flagged: boolean; elected: boolean } | undefined> {
    const { storage, paths, ip, instanceId } = this.services.ctx;
    if (storage.cached.has(paths.server(ip)) || storage.cached.has(paths.instance(instanceId))) return undefined;
    // No leader and nobody queued in the latch: our leader node goes in too (the race's one create; see
    // LeaderService.electByRace). Lost to a peer's (NODE_EXISTS), the nodes are sent again without it.
    const elect = !this.services.leader.hasLeader() && storage.cached.children(paths.leaderElectionLatch).length === 0;
    return (await this.announce(elect)) ?? (elect ? this.announce(false) : undefined);
  }

  private async announce(elect: boolean): Promise<{ flagged: boolean; elected: boolean } | undefined> {
    const { ctx, config, instances, leader } = this.services;
    const { storage, paths, ip, instanceId } = ctx;
    const ops = [
      storage.createOp(paths.server(ip), config.load().disabled ? SERVER_DISABLED : SERVER_ENABLED),
      instances.createOp(),
    ];
    if (elect) ops.push(storage.createOp(paths.leaderElectionInstance, instanceId, 'EPHEMERAL'));
    // A flag already set (a peer joined first) is left as it is. The server and instance nodes still go together:
    // written one after the other, a peer registering between them removed our server node as offline.
    const flagged = (elect || leader.isLeader()) && !storage.cached.has(paths.shardingNecessary);
    if (flagged) ops.push(storage.createOp(paths.shardingNecessary, ''));
    const session = ctx.connection.getSessionId();
    try {
      await storage.transaction(ops, { coalesce: true });
    } catch (error) {
      const code = registryErrorCode(error);
      if (code === 'NODE_EXISTS' || code === 'NO_NODE') return undefined;
      throw error;
    }
    instances.recordCreated(session);
    if (elect) ctx.logger.log(`elected leader (${instanceId})`);
    return { flagged, elected: elect };
  }

  /** After a new session: our ephemeral nodes are gone. Put them back, clear stale markers, re-elect. */
  async reRegister(): Promise<void> {
    if (isRegistered(this.lifecycle.current) && !(await this.tryReRegistration()))
      this.retry.inBackground(
        're-registration',
        () => this.tryReRegistration(),
        () => this.failing('rejoining'),
      );
  }

  private async tryReRegistration(): Promise<boolean> {
    if (!isRegistered(this.lifecycle.current)) return true;
    const { ctx, config, execution, servers, instances, leader, executor } = this.services;
    try {
      // Removed while our session was gone (ElasticJob's removeJobConfiguration): stop, writing nothing back.
      let removed = false;
      await this.retry.quickly('re-registration', async () => {
        removed = (await ctx.storage.direct.exists(ctx.paths.config)) === undefined;
      });
      if (removed) {
        await this.stopAsRemoved();
        return true;
      }
      await this.retry.quickly('re-registration', async () => {
        // The cache first: its watch back on this connection and the tree re-read (it started on RECONNECTED).
        await ctx.storage.startCache();
        // Our running markers first: once our instance node is replaced, peers look for items we were running.
        // What we ran on the old session was aborted with it, and must not be failed over on top of our new runs.
        await execution.clearOwnRunningInfo(config.load().shardingTotalCount, { keepRunningHere: true });
        const server = await ctx.storage.direct.get(ctx.paths.server(ctx.ip));
        const enabled = server === undefined ? !config.load().disabled : server !== SERVER_DISABLED;
        await servers.persistOnline(enabled);
        await instances.persistOnline();
        if (
          (await ctx.storage.direct.get(ctx.paths.leaderElectionInstance)) === undefined &&
          server !== SERVER_DISABLED
        )
          await leader.electLeader();
      });
    } catch (error) {
      this.lifecycle.move({ type: 're-registration-failed', error });
      return false;
    }
    if (!isRegistered(this.lifecycle.move({ type: 're-registered' }))) return true;
    ctx.logger.log(
      `re-registered on the new session (server ${SERVER_ENABLED.toLowerCase()}: ${servers.isEnableServer(ctx.ip)})`,
    );
    // Items may start again, beginning with the firing skipped while the session was gone, if any.
    executor.rejoined();
    ctx.events.publish('session.rejoined', {});
    return true;
  }

  /**
   * Reconcile's look at our own nodes (every reconcile tick, from the cache): our instance node missing on a
   * session we registered on is an operator's deletion the listener missed; missing after a new session, a
   * re-registration to redo. Our server node missing (a peer's clean-up racing our start, an operator) is put back.
   */
  async checkOwnNodes(): Promise<void> {
    const { ctx, config, instances, servers } = this.services;
    if (!isRegistered(this.lifecycle.current) || !ctx.connection.isConnected()) return;
    if (!instances.isLocalInstanceOnline()) {
      const verdict = await instances.checkOwnNodeDeleted();
      if (verdict === 'deleted') await this.onOwnInstanceDeleted();
      else if (verdict === 'session-changed') {
        ctx.logger.warn('reconcile: our instance node is missing on this session: registering it again');
        await this.reRegister();
      }
    }
    const server = ctx.paths.server(ctx.ip);
    if (isRegistered(this.lifecycle.current) && !ctx.storage.cached.has(server)) {
      ctx.logger.warn(`reconcile: ${ctx.storage.fullPath(server)} is missing: putting it back`);
      await servers.persistOnline(!config.load().disabled);
    }
  }

  /**
   * `instances/{me}` is gone. Deleted while our session lives, it is an operator's shutdown of this job on this
   * instance (ElasticJob's lifecycle `shutdown` deletes it; its ShutdownListenerManager then shuts the instance
   * down): we stop here. Gone with an earlier session, it is not: re-registration on the new session puts it
   * back. Gone with the config node, the job was removed (ElasticJob's removeJobConfiguration deletes its tree):
   * we stop, writing nothing back. Gone together with the whole `instances` node but not the config, it is taken
   * as an accident (no ElasticJob tool deletes that node alone): we put ours back and go on, with a warning.
   */
  async onOwnInstanceDeleted(): Promise<void> {
    const { ctx, instances } = this.services;
    const registered = (): boolean => isRegistered(this.lifecycle.current);
    if (!registered() || (await instances.checkOwnNodeDeleted()) !== 'deleted' || !registered()) return;
    const { storage, paths, logger } = ctx;
    const node = storage.fullPath(paths.instance(ctx.instanceId));
    // ElasticJob's removeJobConfiguration deletes the job's whole tree: the job is gone from the cluster.
    if ((await storage.direct.exists(paths.config)) === undefined) {
      await this.stopAsRemoved();
      return;
    }
    // The directory gone, or seen gone and already put back by a peer: an accident (zkCli deleteall, a console).
    if (instances.wentWithDirectory() || (await storage.direct.exists(paths.instances)) === undefined) {
      // Only while the config node is there, in one request: a removal of the whole job (Curator deletes children
      // one by one, `instances` maybe before `config`) must not be undone by our putting the directory back.
      if (!(await instances.restoreAfterAccident(paths.config))) {
        await this.stopAsRemoved();
        return;
      }
      logger.warn(
        `${storage.fullPath(paths.instances)} was deleted with every instance under it: taken as an accident, ` +
          `re-created ${node} (to stop this job on an instance, delete only that instance's node)`,
      );
      return;
    }
    // The listener and the reconcile may both have looked: stop once.
    if (!registered()) return;
    await this.stops.stopByOperator(`${node} was deleted while this instance's session lives`);
    // Curator removes a job's tree child by child (ZKPaths.deleteChildren), so a removal of the whole job can take
    // our instance node before the config node: if the config node goes too, the stop is told as a removal.
    await storage.direct
      .whenDeleted(paths.config, () => this.stops.retell(this.removedReason()))
      .catch((error: unknown) => logger.debug(`could not watch ${paths.config}: ${describeError(error)}`));
  }

  /** How a stop by the job's removal is told (the status's shutdown reason, logs). */
  removedReason(): string {
    const { storage, paths } = this.services.ctx;
    return `the job was removed from ZooKeeper (${storage.fullPath(paths.config)} is gone)`;
  }

  /** The job's config node is gone: removed from the cluster (ElasticJob's removeJobConfiguration). Stops once. */
  private async stopAsRemoved(): Promise<void> {
    if (!isRegistered(this.lifecycle.current)) return;
    await this.stops.stopByOperator(this.removedReason());
  }
}
