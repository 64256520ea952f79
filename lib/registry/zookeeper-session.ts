import { Logger } from '@nestjs/common';
import type { Socket } from 'node:net';
import { describeError, RegistryError } from '../errors/elastic-job.errors.js';
import type { ConnectionStateChange } from './registry.types.js';
import { SilenceMeter } from './silence-meter.js';
import { type NodeAcl, type RawNotification, ZookeeperClientAdapter } from './zookeeper-client.adapter.js';
import { ReplyClock } from './reply-clock.js';
import { ZxidWatermark } from './zxid-watermark.js';
import type { ZookeeperSettings } from './zookeeper-settings.js';

/**
 * Where the session stands; the one field that says it.
 * - LATENT: not started. CLOSED: closed for good.
 * - CONNECTING: the current client has not connected yet (first start, or a new client after LOST).
 * - CONNECTED: the current client is connected.
 * - SUSPENDED: the current client was connected and lost its connection; the session may still come back.
 */
export type SessionState = 'LATENT' | 'CONNECTING' | 'CONNECTED' | 'SUSPENDED' | 'CLOSED';

export interface SessionHooks {
  /** Every watch notification of the current client (persistent watches are dispatched from here). */
  onNotification(notification: RawNotification): void;
  /** Runs when a new session (not the first) is connected, before RECONNECTED (new session) is told. */
  prepareNewSession(): Promise<void>;
}

/**
 * The ZooKeeper session: the one holder of connection state, as Curator's ConnectionStateManager is.
 *
 * What it adds to node-zookeeper-client (docs/reference/zookeeper.md §3.5):
 * - Curator's connection states, told in order: CONNECTED, SUSPENDED, RECONNECTED (same or new session), LOST;
 * - a client-side session-loss timer: SUSPENDED for a whole negotiated session timeout means LOST, since the
 *   client only learns of expiry after it reconnects;
 * - a liveness watchdog over both directions of the socket: nothing *sent* for a third of the session timeout
 *   sends a ping (the client pings only when the socket is idle both ways, so an instance that only hears its
 *   peers' events would never ping, and the server would expire its session); nothing *received* for 2/3 of
 *   it, net of the time this process itself did not run (silence-meter.ts), is a silent partition, so the socket
 *   is dropped and the state goes SUSPENDED (the client itself would stay connected forever);
 * - a fresh client after LOST (a new generation), then the registered "on new session" callbacks;
 * - every pending request fails on LOST and on close (the client never calls back requests queued before expiry).
 */
export class ZookeeperSession {
  private readonly logger = new Logger('ElasticJob:ZooKeeper');
  private state: SessionState = 'LATENT';
  /** Which client is current: events of an older one are ignored. Starts at 1 with the first client. */
  private generation = 0;
  private client: ZookeeperClientAdapter | undefined;
  private sessionIdHex: string | undefined;
  private lossTimer: NodeJS.Timeout | undefined;
  private watchdogTimer: NodeJS.Timeout | undefined;
  private watchdogPeriodMs = 0;
  private lastReceivedAt = 0;
  /** When the socket last took bytes from the client, and how many it had taken then (see checkLiveness). */
  private lastSentAt = 0;
  private lastBytesWritten = -1;
  /** The server's silence net of our own stalls (a check that comes late says this process did not run). */
  private readonly silence = new SilenceMeter();
  private readonly pending = new Set<(error: RegistryError) => void>();
  private readonly stateListeners = new Set<(change: ConnectionStateChange) => void>();
  private readonly newSessionCallbacks = new Set<() => Promise<void> | void>();
  private readonly connectWaiters = new Set<() => void>();

  constructor(
    private readonly settings: ZookeeperSettings,
    private readonly acl: NodeAcl,
    private readonly hooks: SessionHooks,
  ) {}

  get current(): SessionState {
    return this.state;
  }

  /** Started and not closed: requests may be sent (they wait for a connection). */
  isOpen(): boolean {
    return this.state !== 'LATENT' && this.state !== 'CLOSED';
  }

  isConnected(): boolean {
    return this.state === 'CONNECTED';
  }

  /** The current client, for requests; undefined when not open. */
  get activeClient(): ZookeeperClientAdapter | undefined {
    return this.isOpen() ? this.client : undefined;
  }

  /** Negotiated session timeout (requested value until the current client first connects). */
  get sessionTimeoutMs(): number {
    const negotiated = this.client && (this.state === 'CONNECTED' || this.state === 'SUSPENDED');
    return negotiated ? this.client!.sessionTimeoutMs() : this.settings.sessionTimeoutMilliseconds;
  }

  /** The current session id as 16 hex digits, compared with `NodeStat.ephemeralOwner`. */
  get sessionId(): string | undefined {
    return this.sessionIdHex;
  }

  credentials(): { sessionId: Buffer; sessionPassword: Buffer } | undefined {
    return this.client && this.state === 'CONNECTED' ? this.client.credentials() : undefined;
  }

  onStateChange(listener: (change: ConnectionStateChange) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  /** Runs after every new session but the first, right after the RECONNECTED (new session) state event. */
  onNewSession(callback: () => Promise<void> | void): () => void {
    this.newSessionCallbacks.add(callback);
    return () => this.newSessionCallbacks.delete(callback);
  }

  /** A request in flight: `fail` is called if the session is lost or closed first. Returns the untrack call. */
  trackRequest(fail: (error: RegistryError) => void): () => void {
    this.pending.add(fail);
    return () => this.pending.delete(fail);
  }

  /** Opens the first client; it keeps trying to connect in the background. */
  start(): void {
    if (this.state !== 'LATENT')
      throw new RegistryError('ILLEGAL_STATE', undefined, `registry center cannot start from ${this.state}`);
    try {
      this.openClient();
    } catch (error) {
      // A client without what we rely on (assertClientShape): fail the start, loudly, rather than half-work.
      this.state = 'CLOSED';
      throw new RegistryError('UNSUPPORTED_CLIENT', undefined, describeError(error), { cause: error });
    }
    this.scheduleWatchdog(this.settings.sessionTimeoutMilliseconds);
  }

  /** Resolves true when connected, false after `timeoutMs` (or at once when closed). */
  waitForConnection(timeoutMs: number): Promise<boolean> {
    if (this.state === 'CONNECTED') return Promise.resolve(true);
    if (this.state === 'CLOSED') return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (value: boolean): void => {
        clearTimeout(timer);
        this.connectWaiters.delete(onConnect);
        resolve(value);
      };
      const onConnect = (): void => done(this.state === 'CONNECTED');
      const timer = setTimeout(() => done(false), timeoutMs);
      this.connectWaiters.add(onConnect);
    });
  }

  /** Closes the session: its ephemeral nodes go at once. Pending requests fail. Idempotent. */
  async close(): Promise<void> {
    if (this.state === 'CLOSED') return;
    this.state = 'CLOSED';
    clearTimeout(this.lossTimer);
    clearInterval(this.watchdogTimer);
    const client = this.client;
    this.client = undefined;
    this.generation++;
    if (client) await client.close();
    this.failPending('CLOSED', 'the registry center was closed');
    this.wakeConnectWaiters();
  }

  // ---------------------------------------------------------------- the state machine

  /** The highest zxid seen, across this holder's sessions (zxid-watermark.ts). */
  readonly watermark = new ZxidWatermark();
  /** When ZooKeeper last answered us: what a lost session is counted from (reply-clock.ts). */
  private readonly replies = new ReplyClock();

  private openClient(): void {
    const generation = ++this.generation;
    const current = (): boolean => generation === this.generation && this.isOpen();
    const client = new ZookeeperClientAdapter(
      {
        serverLists: this.settings.serverLists,
        sessionTimeoutMs: this.settings.sessionTimeoutMilliseconds,
        spinDelayMs: this.settings.baseSleepTimeMilliseconds,
        digest: this.settings.digest,
        acl: this.acl,
        watermark: this.watermark,
        replies: this.replies,
      },
      (notification) => current() && this.hooks.onNotification(notification),
    );
    this.client = client;
    this.state = 'CONNECTING';
    client.on('connected', () => current() && this.onConnected(client));
    client.on('disconnected', () => current() && this.onDisconnected());
    client.on('expired', () => current() && this.onLost('the server reported the session expired'));
    client.on(
      'authenticationFailed',
      () => current() && this.logger.error('ZooKeeper rejected the digest credentials: check zookeeper.digest'),
    );
    client.connect();
  }

  private onConnected(client: ZookeeperClientAdapter): void {
    clearTimeout(this.lossTimer);
    this.lossTimer = undefined;
    const firstOfGeneration = this.state === 'CONNECTING';
    this.state = 'CONNECTED';
    this.lastReceivedAt = this.lastSentAt = Date.now();
    this.replies.reset(this.lastReceivedAt);
    this.silence.reset(this.lastReceivedAt);
    try {
      this.attachLivenessProbe(client.socket());
    } catch (error) {
      // Never thrown into the client (it would crash the app): said loudly instead.
      this.logger.error(`the liveness watchdog cannot watch this connection: ${describeError(error)}`);
    }
    // The server may grant less than we asked for: the watchdog runs on the negotiated timeout.
    this.scheduleWatchdog(client.sessionTimeoutMs());
    this.sessionIdHex = client.sessionId();
    this.wakeConnectWaiters();
    if (firstOfGeneration && this.generation === 1) {
      this.logger.log(
        `connected to ${this.settings.serverLists}, session 0x${this.sessionIdHex}, timeout ` +
          `${client.sessionTimeoutMs()} ms`,
      );
      this.emitState({ state: 'CONNECTED', newSession: true });
      return;
    }
    if (!firstOfGeneration) {
      this.logger.log(`reconnected, session 0x${this.sessionIdHex} kept`);
      this.emitState({ state: 'RECONNECTED', newSession: false });
      return;
    }
    this.logger.log(`connected with a new session 0x${this.sessionIdHex}; re-registering`);
    void this.hooks
      .prepareNewSession()
      .catch((error: unknown) => this.logger.warn(`could not ensure namespace root: ${String(error)}`))
      .then(() => {
        // RECONNECTED first: caches put their watch back and re-read at once; the jobs' re-registration (the
        // callbacks) waits for its cache, so it never plans from a cache that has no watch on this connection.
        this.emitState({ state: 'RECONNECTED', newSession: true });
        return this.runNewSessionCallbacks();
      });
  }

  private async runNewSessionCallbacks(): Promise<void> {
    await Promise.all(
      [...this.newSessionCallbacks].map(async (callback) => {
        try {
          await callback();
        } catch (error) {
          this.logger.error(`re-registration after a new session failed: ${describeError(error)}`);
        }
      }),
    );
  }

  private onDisconnected(): void {
    if (this.state !== 'CONNECTED') return;
    this.state = 'SUSPENDED';
    const timeout = this.sessionTimeoutMs;
    // The server expires the session a session timeout after it last heard from us, which is about when it last
    // answered us (reply-clock.ts: node events do not count); count from there, not from when we noticed (a silent
    // partition is noticed late). Then we declare the session lost no later than the server can, and abort running
    // items before a peer can start them (Curator counts from the disconnect instead: CURATOR-405).
    const remaining = Math.max(0, this.replies.lastReplyAt + timeout - Date.now());
    this.logger.warn(
      `disconnected from ZooKeeper (session 0x${this.sessionIdHex ?? '?'}); the session is lost if not back within ` +
        `${remaining} ms`,
    );
    this.emitState({ state: 'SUSPENDED', newSession: false });
    clearTimeout(this.lossTimer);
    this.lossTimer = setTimeout(
      () => this.onLost(`no answer from ZooKeeper for a whole session timeout (${timeout} ms)`),
      remaining,
    );
    this.lossTimer.unref();
  }

  private onLost(reason: string): void {
    if (!this.isOpen()) return;
    clearTimeout(this.lossTimer);
    this.lossTimer = undefined;
    this.logger.warn(`session 0x${this.sessionIdHex ?? '?'} lost: ${reason}; opening a new session`);
    const old = this.client;
    this.state = 'SUSPENDED'; // not connected; openClient makes it CONNECTING with the new client
    this.failPending('SESSION_EXPIRED', `session lost: ${reason}`);
    this.emitState({ state: 'LOST', newSession: false });
    if ((this.state as SessionState) === 'CLOSED') return; // a listener closed us
    this.openClient();
    // Closing the old client really ends the session if the server still had it (silent partition).
    void old?.close();
  }

  private emitState(change: ConnectionStateChange): void {
    for (const listener of [...this.stateListeners]) {
      try {
        listener(change);
      } catch (error) {
        this.logger.error(`connection state listener failed: ${String(error)}`);
      }
    }
  }

  private wakeConnectWaiters(): void {
    for (const waiter of [...this.connectWaiters]) waiter();
  }

  private failPending(code: string, message: string): void {
    const fails = [...this.pending];
    this.pending.clear();
    for (const fail of fails) fail(new RegistryError(code, undefined, message));
  }

  // ---------------------------------------------------------------- liveness watchdog

  /** node-zookeeper-client has no read timeout; watch the socket for received bytes ourselves. */
  private attachLivenessProbe(socket: Socket): void {
    const marked = socket as Socket & { __elasticJobProbe?: boolean };
    if (marked.__elasticJobProbe) return;
    marked.__elasticJobProbe = true;
    socket.on('data', () => {
      this.lastReceivedAt = Date.now();
    });
  }

  /** Six checks per session timeout: a ping goes out between 1/3 and 1/2 of it after the last request. */
  private scheduleWatchdog(sessionTimeoutMs: number): void {
    const period = Math.max(100, Math.floor(sessionTimeoutMs / 6));
    if (period === this.watchdogPeriodMs || !this.isOpen()) return;
    clearInterval(this.watchdogTimer);
    this.watchdogPeriodMs = period;
    this.watchdogTimer = setInterval(() => this.checkLiveness(), period);
    this.watchdogTimer.unref();
  }

  /**
   * Both directions of the socket. Sending: the server expires a session that sent nothing for a session
   * timeout, whatever it received, so when nothing was sent for a third of it we ping, as ZooKeeper's Java
   * client does (it pings on idle *sends*; node-zookeeper-client only on an idle socket). Receiving: nothing for
   * 2/3 of it (pings are answered), our own stalls not counted, is a silent partition.
   */
  private checkLiveness(): void {
    if (this.state !== 'CONNECTED' || !this.client) return;
    const now = Date.now();
    const timeout = this.client.sessionTimeoutMs();
    let socket: Socket;
    try {
      socket = this.client.socket();
    } catch {
      return; // said when the connection was made (onConnected)
    }
    const written = socket.bytesWritten;
    if (written !== this.lastBytesWritten) {
      this.lastBytesWritten = written;
      this.lastSentAt = now;
    } else if (now - this.lastSentAt >= timeout / 3) {
      this.client.ping();
      this.lastSentAt = now;
    }
    // Our own loop (a long synchronous stretch) or the host (too busy to schedule us) stalled: nothing was read or
    // sent meanwhile, so that part of the silence is ours, not the server's (silence-meter.ts).
    const verdict = this.silence.check(now, this.lastReceivedAt, timeout, this.watchdogPeriodMs);
    if (verdict === 'heard') return;
    const silentFor = now - this.lastReceivedAt;
    if (verdict === 'stalled') {
      this.logger.debug(
        `session 0x${this.sessionIdHex ?? '?'}: this process did not run for ${this.silence.ownSilenceMs} of the ` +
          `${silentFor} ms without an answer: ZooKeeper's silence is judged on the rest`,
      );
      return;
    }
    const limit = Math.floor((timeout * 2) / 3);
    this.logger.warn(
      `session 0x${this.sessionIdHex ?? '?'}: nothing received from ZooKeeper for ${silentFor} ms ` +
        `(limit ${limit} ms): dropping the connection`,
    );
    socket.destroy();
    this.onDisconnected();
  }
}
