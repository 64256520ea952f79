import { Logger } from '@nestjs/common';
import { describeError, registryErrorCode } from '../errors/elastic-job.errors.js';
import type { RegistryCenter } from './registry-center.js';
import type { ConnectionStateChange, TransactionOp, WatchEvent } from './registry.types.js';

type LatchState = 'LATENT' | 'STARTED' | 'CLOSED';

const LOCK_NAME = 'latch-';

/** Curator's sort key: what follows the last `latch-` (the 10-digit sequence), or the whole name. */
export function latchSortKey(name: string): string {
  const index = name.lastIndexOf(LOCK_NAME);
  return index >= 0 ? name.slice(index + LOCK_NAME.length) : name;
}

/** Children in Curator's order (String.compareTo on the sort key; never localeCompare). */
export function sortLatchChildren(children: string[]): string[] {
  return [...children].sort((a, b) => {
    const ka = latchSortKey(a);
    const kb = latchSortKey(b);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
}

/**
 * Apache Curator's LeaderLatch, wire-compatible (docs/reference/zookeeper.md §1): a Java Curator participant and this
 * one can share a latch path. Participants are protected EPHEMERAL_SEQUENTIAL children `_c_{uuid}-latch-{seq}`
 * holding the id as UTF-8 bytes; the lowest sequence leads; everyone else watches only its predecessor, with
 * getData (no watch is left behind on a node that is already gone). Leadership at index 0 is confirmed by
 * checking that the node belongs to the current session (CURATOR-696).
 *
 * LATENT → start() → STARTED → close() → CLOSED. close() always deletes our node.
 */
export class LeaderLatch {
  private readonly logger: Logger;
  private state: LatchState = 'LATENT';
  private ourPath: string | undefined;
  /** The session our node was created in: while it is still the session, the node is provably ours. */
  private ourSession: string | undefined;
  private leader = false;
  private readonly waiters = new Set<() => void>();
  private unsubscribe: (() => void) | undefined;
  private checking: Promise<void> | undefined;
  private recheck = false;
  // One stable watcher for the predecessor: the client de-duplicates watchers by function identity.
  private readonly predecessorWatcher = (event: WatchEvent): void => {
    if (this.state !== 'STARTED') return;
    if (event.type === 'NODE_DELETED') this.check();
    else this.check(); // re-arm on anything else: a data change also consumes the one-shot watch
  };

  constructor(
    private readonly registry: RegistryCenter,
    readonly latchPath: string,
    private readonly id = '',
    logContext = 'ElasticJob:LeaderLatch',
  ) {
    this.logger = new Logger(logContext);
  }

  get isStarted(): boolean {
    return this.state === 'STARTED';
  }

  hasLeadership(): boolean {
    return this.state === 'STARTED' && this.leader;
  }

  /** Our node's path once created (namespace-relative). */
  get nodePath(): string | undefined {
    return this.ourPath;
  }

  async start(deadline = Date.now() + 60_000): Promise<void> {
    if (this.state !== 'LATENT') throw new Error(`LeaderLatch at ${this.latchPath} cannot start from ${this.state}`);
    this.state = 'STARTED';
    this.unsubscribe = this.registry.onStateChange((change) => this.onConnectionState(change));
    await this.reset(deadline);
  }

  /** Resolves true once leader, false at `timeoutMs` or when the latch closes. Never waits unbounded. */
  await(timeoutMs: number): Promise<boolean> {
    if (this.hasLeadership()) return Promise.resolve(true);
    if (this.state !== 'STARTED') return Promise.resolve(false);
    return new Promise((resolve) => {
      const wake = (): void => {
        if (this.hasLeadership() || this.state !== 'STARTED') finish(this.hasLeadership());
      };
      const finish = (value: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve(value);
      };
      const timer = setTimeout(() => finish(this.hasLeadership()), timeoutMs);
      this.waiters.add(wake);
    });
  }

  /** Gives up the latch: our node is deleted (retried across a reconnect), waiters wake with false. */
  async close(): Promise<void> {
    if (this.state !== 'STARTED') {
      this.state = 'CLOSED';
      return;
    }
    this.state = 'CLOSED';
    this.unsubscribe?.();
    this.setLeadership(false);
    const path = this.ourPath;
    this.ourPath = undefined;
    if (path) await this.deleteGuaranteed(path);
  }

  /**
   * Gives up the latch in one transaction with `ops`: what the leader did last and its release are one write, and
   * the next participant wakes to see them both. All or nothing: when the transaction fails (thrown), the latch is
   * still held, and the caller does its work the plain way and then calls close().
   */
  async closeWith(ops: readonly TransactionOp[]): Promise<void> {
    const path = this.ourPath;
    if (this.state !== 'STARTED' || !path) throw new Error(`LeaderLatch at ${this.latchPath} is not held`);
    await this.registry.transaction([...ops, { op: 'remove', path }]);
    this.state = 'CLOSED';
    this.unsubscribe?.();
    this.setLeadership(false);
    this.ourPath = undefined;
  }

  private async deleteGuaranteed(path: string): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await this.registry.remove(path);
        return;
      } catch (error) {
        const code = registryErrorCode(error);
        // A new session means the node went with the old one.
        if (code === 'SESSION_EXPIRED' || code === 'CLOSED') return;
        if (!(await this.registry.waitForConnection(this.registry.sessionTimeoutMs))) return;
      }
    }
    this.logger.warn(`could not delete latch node ${path}; it goes when the session ends`);
  }

  private setLeadership(value: boolean): void {
    if (this.leader === value) return;
    this.leader = value;
    for (const wake of [...this.waiters]) wake();
  }

  private async reset(deadline = Date.now() + this.registry.sessionTimeoutMs * 2): Promise<void> {
    this.setLeadership(false);
    const old = this.ourPath;
    this.ourPath = undefined;
    if (old) void this.deleteGuaranteed(old);
    const created = await this.registry.createProtectedEphemeralSequential(
      this.latchPath,
      LOCK_NAME,
      Buffer.from(this.id, 'utf8'),
      deadline,
    );
    if (this.state !== 'STARTED') {
      await this.deleteGuaranteed(created);
      return;
    }
    this.ourPath = created;
    this.ourSession = this.registry.getSessionId();
    this.check();
  }

  /** Serialized: a check requested while one runs makes it run once more. */
  private check(): void {
    if (this.checking) {
      this.recheck = true;
      return;
    }
    this.checking = this.checkLeadership()
      .catch((error: unknown) => {
        const code = registryErrorCode(error);
        if (code !== 'CLOSED') this.logger.warn(`latch ${this.latchPath}: ${describeError(error)}`);
      })
      .finally(() => {
        this.checking = undefined;
        if (this.recheck && this.state === 'STARTED') {
          this.recheck = false;
          this.check();
        }
      });
  }

  private async checkLeadership(): Promise<void> {
    if (this.state !== 'STARTED' || !this.ourPath) return;
    const children = await this.registry.getChildren(this.latchPath);
    if (this.state !== 'STARTED') return;
    if (children === undefined) return this.reset(); // CURATOR-724: the latch path itself is gone
    const sorted = sortLatchChildren(children);
    const ourName = this.ourPath.slice(this.ourPath.lastIndexOf('/') + 1);
    const index = sorted.indexOf(ourName);
    if (index < 0) return this.reset();
    if (index === 0) {
      // CURATOR-696: a node left by an earlier session must not lead. One created in the current session (the
      // create answered on it, and the session never changed since) is ours without asking again.
      if (this.ourSession === undefined || this.ourSession !== this.registry.getSessionId()) {
        const ours = await this.registry.getData(this.ourPath);
        if (this.state !== 'STARTED') return;
        if (!ours || ours.stat.ephemeralOwner !== this.registry.getSessionId()) return this.reset();
      }
      this.setLeadership(true);
      return;
    }
    this.setLeadership(false);
    const predecessor = `${this.latchPath}/${sorted[index - 1]}`;
    const exists = await this.registry.getData(predecessor, this.predecessorWatcher);
    if (!exists) this.recheck = true; // already gone: look again
  }

  private onConnectionState(change: ConnectionStateChange): void {
    if (this.state !== 'STARTED') return;
    if (change.state === 'SUSPENDED' || change.state === 'LOST') {
      // Curator's default policy: leadership is not trusted without a connection. The node is kept.
      this.setLeadership(false);
    } else if (change.state === 'RECONNECTED') {
      // Same session: our node may still lead. New session: it is gone, and the check resets.
      this.check();
    }
  }
}
