import type { Logger } from '@nestjs/common';
import { describeError } from '../errors/elastic-job.errors.js';
import type { ElasticJobOperator } from '../lifecycle/elastic-job-operator.js';
import type { NamespaceChange } from '../lifecycle/namespace-watch.js';

/** With no page listening for this long, the namespace watch is closed (every write in it would be sent to us). */
const WATCH_IDLE_MS = 5 * 60_000;

/** The watch's lifecycle, one value: off (and whether its failure was said), starting, following, or closed for good. */
type FollowerState =
  | { kind: 'off'; warned: boolean }
  | { kind: 'starting'; started: Promise<void> }
  | { kind: 'following'; watch: { close(): void }; idleCheck: NodeJS.Timeout }
  | { kind: 'closed' };

/**
 * The console's one ZooKeeper watch over the namespace (ElasticJobOperator.watch): started by the first request,
 * retried by the next one when it fails (said once until it works), closed when no page has listened for a while.
 */
export class NamespaceFollower {
  private state: FollowerState = { kind: 'off', warned: false };
  private lastUse = Date.now();

  constructor(
    private readonly operator: () => ElasticJobOperator,
    private readonly onChange: (change: NamespaceChange) => void,
    /** Called when the watch starts: anything may have changed while there was none. */
    private readonly onStart: () => void,
    /** How many pages listen now (the watch is kept while any does). */
    private readonly listeners: () => number,
    private readonly logger: Logger,
  ) {}

  get following(): boolean {
    return this.state.kind === 'following';
  }

  /** A request or a page needs the watch: started if off; resolves once started or failed. */
  async ensure(): Promise<void> {
    this.lastUse = Date.now();
    const state = this.state;
    if (state.kind === 'following' || state.kind === 'closed') return;
    if (state.kind === 'starting') return state.started;
    const started = this.operator()
      .watch((change) => this.onChange(change), { workflows: true })
      .then(
        (watch) => {
          if (this.state.kind === 'closed') return watch.close();
          const idleCheck = setInterval(() => this.closeWhenIdle(), 60_000);
          idleCheck.unref();
          this.state = { kind: 'following', watch, idleCheck };
          this.onStart();
        },
        (error: unknown) => {
          if (this.state.kind === 'closed') return;
          // Said once until it works again: every request tries, and ZooKeeper may be away for a while.
          if (!state.warned)
            this.logger.warn(`cannot follow ZooKeeper's changes yet (reading everything): ${describeError(error)}`);
          this.state = { kind: 'off', warned: true };
        },
      );
    this.state = { kind: 'starting', started };
    return started;
  }

  /** A page stopped listening: the idle time counts from now. */
  touch(): void {
    this.lastUse = Date.now();
  }

  /** At shutdown: the watch closed, and never started again. */
  close(): void {
    this.stop();
    this.state = { kind: 'closed' };
  }

  private closeWhenIdle(): void {
    if (this.listeners() === 0 && Date.now() - this.lastUse > WATCH_IDLE_MS) this.stop();
  }

  private stop(): void {
    if (this.state.kind !== 'following') return;
    this.state.watch.close();
    clearInterval(this.state.idleCheck);
    this.state = { kind: 'off', warned: false };
  }
}
