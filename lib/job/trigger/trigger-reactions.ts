import { describeError, isConnectionTrouble } from '../../errors/elastic-job.errors.js';
import type { TreeEvent } from '../../registry/tree-cache.js';
import type { JobContext } from '../context/job-context.js';
import { runReaction, type ClusterChangeHandler } from '../context/cluster-change-handler.js';

/**
 * ElasticJob's TriggerListenerManager: `trigger/{me}` added → consume it and fire now (queued once if a firing
 * runs), with the job parameter it carries, if any.
 *
 * A consume cut by connection trouble is taken up again once connected: the node is still there and still cached, so
 * no second ADDED comes for it, and the trigger would be lost. (Java's removeTriggerFlag ignores ConnectionLoss,
 * RegExceptionHandler with ZookeeperCuratorIgnoredExceptionProvider, and fires anyway, leaving the node.)
 */
export class TriggerReactions implements ClusterChangeHandler {
  /** A consume waiting for the connection to come back: its token, and the call that stops listening for it. */
  private waiting: { token: symbol; unsubscribe: () => void } | undefined;
  /** The job stopped: a consume still in flight then does not wait for a reconnection. */
  private closed = false;

  constructor(
    private readonly ctx: JobContext,
    /** `jobParameter`: what the trigger node carried, for that run (undefined: the job's own). */
    private readonly onTrigger: (jobParameter: string | undefined) => void,
  ) {}

  onChange(event: TreeEvent): void {
    if (event.path !== this.ctx.paths.trigger(this.ctx.instanceId) || event.type !== 'ADDED') return;
    this.stopWaiting(); // a new node: this ADDED consumes it
    this.consume(event.path);
  }

  private consume(path: string): void {
    runReaction(this.ctx, 'manual trigger', async () => {
      let carried: string | undefined;
      try {
        // A trigger may carry a job parameter for that run (ours; Java's are empty, and Java ignores the data).
        carried = await this.ctx.storage.direct.get(path);
        await this.ctx.storage.remove(path); // consumed by its target
      } catch (error) {
        if (!isConnectionTrouble(error)) throw error;
        this.ctx.logger.warn(
          `manual trigger not taken yet (${describeError(error)}): taken once connected to ZooKeeper again`,
        );
        this.retryWhenReconnected(path);
        return;
      }
      this.onTrigger(carried === undefined || carried === '' ? undefined : carried);
    });
  }

  /**
   * On the next RECONNECTED (same session or new), once the cache has re-read the tree, the node still there is
   * consumed. Gone (removed by the next trigger, whose new node has its own ADDED) or the job stopped (its cache
   * closed): nothing.
   */
  private retryWhenReconnected(path: string): void {
    this.stopWaiting();
    if (this.closed) return;
    const token = Symbol(path);
    const retry = (): void => {
      unsubscribe();
      void this.ctx.storage.cached.settled().then(() => {
        if (this.waiting?.token !== token) return; // an ADDED took over meanwhile
        this.waiting = undefined;
        if (this.ctx.storage.cached.has(path)) this.consume(path);
      });
    };
    const unsubscribe = this.ctx.connection.onStateChange((change) => {
      if (change.state === 'RECONNECTED' && this.waiting?.token === token) retry();
    });
    this.waiting = { token, unsubscribe };
    // Connected already (a request timed out on a live connection, or the reconnection came first): no event to come.
    if (this.ctx.connection.isConnected()) retry();
  }

  /** The job stopped: a consume waiting for the connection is given up (the node stays for the next start). */
  close(): void {
    this.closed = true;
    this.stopWaiting();
  }

  private stopWaiting(): void {
    this.waiting?.unsubscribe();
    this.waiting = undefined;
  }
}
