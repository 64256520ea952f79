import { CoordinationTimeoutError, describeError } from '../../errors/elastic-job.errors.js';
import { describeItems } from '../../util/item-list.js';
import { mapBounded } from '../../registry/request-limits.js';
import type { JobContext } from '../context/job-context.js';
import { everyItem, serverIpOfInstance } from '../paths.js';
import type { ServerService } from '../server/server.service.js';

/**
 * Once per firing across the cluster, for distribute-once listeners (ElasticJob's GuaranteeService and
 * AbstractDistributeOnceElasticJobListener, docs/reference/elasticjob.md §5.7), on the same nodes: each instance
 * creates `guarantee/{started|completed}/{item}` for its items; the one that sees every item there runs the callback
 * under the `guarantee/{kind}-latch` latch, then deletes `guarantee/{kind}`, which tells the others it was done.
 *
 * Unlike ElasticJob, an item nobody will run does not hold everyone up until the timeout (its deadlocks with
 * disabled servers, #1692, and dead instances, #2142): items that are disabled, or owned by no live instance on an
 * enabled server (and not marked running or waiting for failover), are not waited for, re-judged on every change in
 * the tree. Every wait is bounded: a timeout deletes the nodes (as ElasticJob does) and rejects with
 * CoordinationTimeoutError; the job stopping here (`signal`) ends the wait at once.
 */
export class GuaranteeService {
  constructor(
    private readonly ctx: JobContext,
    private readonly servers: ServerService,
  ) {}

  async once(
    kind: 'started' | 'completed',
    items: readonly number[],
    total: number,
    timeoutMs: number,
    callback: () => Promise<void>,
    signal?: AbortSignal,
  ): Promise<void> {
    if (items.length === 0 || signal?.aborted) return;
    const { storage, paths } = this.ctx;
    const root = kind === 'started' ? paths.guaranteeStarted : paths.guaranteeCompleted;
    const latch = kind === 'started' ? paths.guaranteeStartedLatch : paths.guaranteeCompletedLatch;
    await mapBounded(items, (item) => storage.createOrKeep(paths.guaranteeItem(kind, item)));
    await storage.cached.settled();
    const deadline = Date.now() + timeoutMs;
    // Our nodes are in the cache now: a missing root means the one that ran the callback has deleted it.
    const done = (): boolean => !storage.cached.has(root);
    const allThere = (): boolean => this.allThere(storage.cached.children(root), total);
    while (!done()) {
      if (allThere()) {
        let ran = false;
        await storage.executeInLeader(latch, Math.max(1, deadline - Date.now()), async () => {
          // Fresh reads under the latch: another instance may have run it and deleted the nodes meanwhile.
          const names = await storage.direct.children(root);
          if (names === undefined || !this.allThere(names, total)) return;
          ran = true;
          try {
            await callback();
          } finally {
            await storage.removeTree(root);
          }
        });
        if (ran) return;
      }
      const remaining = deadline - Date.now();
      const settled = remaining > 0 && (await storage.cached.waitFor(() => done() || allThere(), remaining, signal));
      if (signal?.aborted) return; // the job is stopping here: its round is not waited for any more
      if (!settled) {
        await storage.removeTree(root).catch((error: unknown) => {
          this.ctx.logger.warn(`could not clear ${storage.fullPath(root)}: ${describeError(error)}`);
        });
        const missing = this.expectedItems(total).filter((item) => !storage.cached.has(`${root}/${item}`));
        throw new CoordinationTimeoutError(
          this.ctx.jobName,
          `every item to have ${kind} (distribute-once listener; items [${describeItems(missing)}] had not)`,
          timeoutMs,
        );
      }
    }
  }

  private allThere(names: readonly string[], total: number): boolean {
    const there = new Set(names);
    return this.expectedItems(total).every((item) => there.has(String(item)));
  }

  /**
   * The items some instance will run: not disabled, and owned by an online instance whose server is enabled, or
   * still marked running or waiting for failover (a crashed owner's item that a peer will run again: not done).
   */
  private expectedItems(total: number): number[] {
    const { storage, paths } = this.ctx;
    return everyItem(total).filter((item) => {
      if (storage.cached.has(paths.disabled(item))) return false;
      if (
        storage.cached.has(paths.running(item)) ||
        storage.cached.has(paths.failoverItem(item)) ||
        storage.cached.has(paths.failover(item))
      )
        return true;
      const owner = storage.cached.get(paths.shardingInstance(item));
      if (owner === undefined || !storage.cached.has(paths.instance(owner))) return false;
      return this.servers.isEnableServer(serverIpOfInstance(owner));
    });
  }
}
