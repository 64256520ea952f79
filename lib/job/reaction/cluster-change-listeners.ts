import type { JobContext } from '../context/job-context.js';
import type { ClusterChangeHandler } from '../context/cluster-change-handler.js';

/**
 * The job's cluster-change handlers over its TreeCache: one subscription, every event handed to each handler in
 * turn (each decides what it reacts to: no switchboard here), and the registration's start and end told to them.
 */
export class ClusterChangeListeners {
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly ctx: JobContext,
    /** In the order they hear each event. */
    private readonly handlers: readonly ClusterChangeHandler[],
  ) {}

  /** `registering`: the registration writes our own nodes and flags resharding itself (ShardingReactions). */
  start(options: { registering?: boolean } = {}): void {
    for (const handler of this.handlers) handler.start?.(options.registering ?? false);
    this.unsubscribe ??= this.ctx.storage.cached.listen((event) => {
      for (const handler of this.handlers) handler.onChange(event);
    });
  }

  registered(): void {
    for (const handler of this.handlers) handler.registered?.();
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** The job's teardown: stops hearing, and each handler lets go of what waits for a later event. */
  close(): void {
    this.stop();
    for (const handler of this.handlers) handler.close?.();
  }
}
