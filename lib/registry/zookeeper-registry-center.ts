import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import zookeeper from 'node-zookeeper-client';
import type { ACL, Client, Event as ZkEvent, Exception as ZkException, Stat } from 'node-zookeeper-client';
import { RegistryError } from '../errors/elastic-job.errors.js';
import { streamlineClientIo } from './client-io.js';
import { assertClientShape, connectedSocket, sendPing } from './client-internals.js';
import { multiAcl, type MultiOp, sendMulti } from './multi-request.js';
import { PERSISTENT_RECURSIVE, sendAddWatch, tapNotifications } from './persistent-watch.js';
import { MAX_NODE_DATA_BYTES, multiBatches, multiOpBytes } from './request-limits.js';
import type {
  ConnectionStateChange,
  NodeData,
  NodeMode,
  NodeStat,
  TransactionOp,
  WatchEventType,
  Watcher,
} from './registry.types.js';
import type { ZookeeperConfiguration } from '../interfaces/module-options.interface.js';

type Lifecycle = 'LATENT' | 'STARTED' | 'CLOSED';

const MODES: Record<NodeMode, number> = {
  PERSISTENT: zookeeper.CreateMode.PERSISTENT,
  EPHEMERAL: zookeeper.CreateMode.EPHEMERAL,
  PERSISTENT_SEQUENTIAL: zookeeper.CreateMode.PERSISTENT_SEQUENTIAL,
  EPHEMERAL_SEQUENTIAL: zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL,
};

const EVENT_TYPES: Record<number, WatchEventType> = {
  [zookeeper.Event.NODE_CREATED]: 'NODE_CREATED',
  [zookeeper.Event.NODE_DELETED]: 'NODE_DELETED',
  [zookeeper.Event.NODE_DATA_CHANGED]: 'NODE_DATA_CHANGED',
  [zookeeper.Event.NODE_CHILDREN_CHANGED]: 'NODE_CHILDREN_CHANGED',
};

export const DEFAULT_ZOOKEEPER_SETTINGS = {
  sessionTimeoutMilliseconds: 60_000,
  connectionTimeoutMilliseconds: 15_000,
  baseSleepTimeMilliseconds: 1_000,
  maxSleepTimeMilliseconds: 3_000,
  maxRetries: 3,
} as const;

function toStat(stat: Stat): NodeStat {
  return {
    version: stat.version,
    cversion: stat.cversion,
    numChildren: stat.numChildren,
    ephemeralOwner: stat.ephemeralOwner.toString('hex'),
    mtime: Number(stat.mtime.readBigInt64BE(0)),
    mzxid: stat.mzxid.readBigInt64BE(0),
  };
}

function isZkException(error: unknown): error is ZkException {
  return typeof error === 'object' && error !== null && typeof (error as ZkException).code === 'number' && 'name' in error;
}

/** Data the server would refuse by dropping the connection (jute.maxbuffer) is refused here, with a reason. */
function checkDataSize(path: string, data: Buffer): void {
  if (data.length > MAX_NODE_DATA_BYTES) {
    throw new RegistryError('REQUEST_TOO_LARGE', path, `${data.length} bytes for ${path} exceed what a ZooKeeper node may hold here (${MAX_NODE_DATA_BYTES})`);
  }
}

/** ZooKeeper error name of a failure: 'NO_NODE', 'NODE_EXISTS', 'CONNECTION_LOSS', ... */
export function registryErrorCode(error: unknown): string | undefined {
  return error instanceof RegistryError ? error.code : undefined;
}

/**
 * One ZooKeeper session per process, shared by every job, over `node-zookeeper-client`.
 *
 * What it adds to the client (docs/reference/zookeeper.md §3.5):
 * - Curator's connection states: CONNECTED, SUSPENDED, RECONNECTED (same or new session), LOST;
 * - a client-side session-loss timer: SUSPENDED for a whole negotiated session timeout means LOST, since the
 *   client only learns of expiry after it reconnects;
 * - a liveness watchdog over both directions of the socket: nothing *sent* for a third of the session timeout
 *   sends a ping (the client pings only when the socket is idle both ways, so an instance that only hears its
 *   peers' events would never ping, and the server would expire its session); nothing *received* for 2/3 of
 *   it is a silent partition, so the socket is dropped and the state goes SUSPENDED (the client itself would
 *   stay connected forever);
 * - a fresh client after LOST, then the registered "on new session" callbacks;
 * - every pending promise fails on LOST (the client never calls back requests queued before expiry);
 * - protected-mode sequential creates and no client-side retries;
 * - Buffers for every write, digest ACL on every created node, namespace-relative paths.
 */
export class ZookeeperRegistryCenter {
  private readonly logger = new Logger('ElasticJob:ZooKeeper');
  private readonly settings: Required<Omit<ZookeeperConfiguration, 'digest'>> & { digest?: string };
  private readonly acls: ACL[];
  /** The same ACL, serialized once for multi requests. */
  private readonly aclBytes: Buffer;
  private lifecycle: Lifecycle = 'LATENT';
  private client: Client | undefined;
  private generation = 0;
  private everConnected = false;
  private generationConnected = false;
  private connected = false;
  private sessionId: string | undefined;
  private lossTimer: NodeJS.Timeout | undefined;
  private watchdogTimer: NodeJS.Timeout | undefined;
  private lastReceivedAt = 0;
  /** When the socket last took bytes from the client, and how many it had taken then (see checkLiveness). */
  private lastSentAt = 0;
  private lastBytesWritten = -1;
  private watchdogPeriodMs = 0;
  private readonly pending = new Set<(error: RegistryError) => void>();
  private readonly stateListeners = new Set<(change: ConnectionStateChange) => void>();
  private readonly newSessionCallbacks = new Set<() => Promise<void> | void>();
  private readonly connectWaiters = new Set<() => void>();
  private readonly wrappedWatchers = new WeakMap<Watcher, (event: ZkEvent) => void>();
  /** Requests sent, by kind: what a firing costs, for benchmarks and operators. */
  /** Persistent recursive watchers by namespace-relative root: see addPersistentRecursiveWatch. */
  private readonly persistentWatchers = new Map<string, Set<Watcher>>();
  readonly stats = { reads: 0, writes: 0, watchRequests: 0, watchEvents: 0 };

  constructor(config: ZookeeperConfiguration) {
    this.settings = {
      ...DEFAULT_ZOOKEEPER_SETTINGS,
      ...Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined)),
    } as Required<Omit<ZookeeperConfiguration, 'digest'>> & { digest?: string };
    // Digest users: only authenticated sessions may touch the nodes (ZooKeeper's 'auth' scheme); else open.
    const acl = { permission: zookeeper.Permission.ALL, ...(config.digest ? { scheme: 'auth', id: '' } : { scheme: 'world', id: 'anyone' }) };
    this.acls = [new zookeeper.ACL(acl.permission, new zookeeper.Id(acl.scheme, acl.id))];
    this.aclBytes = multiAcl([acl]);
  }

  get namespace(): string {
    return this.settings.namespace;
  }

  /** Negotiated session timeout (requested value until the first connect). */
  get sessionTimeoutMs(): number {
    return this.client && this.generationConnected ? this.client.getSessionTimeout() : this.settings.sessionTimeoutMilliseconds;
  }

  isConnected(): boolean {
    return this.connected;
  }

  /** The current session id as 16 hex digits, compared with `NodeStat.ephemeralOwner`. */
  getSessionId(): string | undefined {
    return this.sessionId;
  }

  /** For fault tests: the current session's id and password, to end the session from another client. */
  getSessionCredentials(): { sessionId: Buffer; sessionPassword: Buffer } | undefined {
    if (!this.client || !this.connected) return undefined;
    return { sessionId: this.client.getSessionId(), sessionPassword: this.client.getSessionPassword() };
  }

  onStateChange(listener: (change: ConnectionStateChange) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  /**
   * Runs after every new session but the first (the old one expired or was declared lost), right after the
   * RECONNECTED (new session) state event.
   */
  onNewSession(callback: () => Promise<void> | void): () => void {
    this.newSessionCallbacks.add(callback);
    return () => this.newSessionCallbacks.delete(callback);
  }

  /**
   * Starts connecting. Resolves true once connected (namespace root ensured), or false when
   * `connectionTimeoutMilliseconds` passes first; the client keeps trying in the background either way.
   */
  async start(): Promise<boolean> {
    if (this.lifecycle !== 'LATENT') throw new RegistryError('ILLEGAL_STATE', undefined, `registry center cannot start from ${this.lifecycle}`);
    this.lifecycle = 'STARTED';
    try {
      this.openClient();
    } catch (error) {
      // A client without what we rely on (assertClientShape): fail the start, loudly, rather than half-work.
      this.lifecycle = 'CLOSED';
      this.client?.close();
      throw new RegistryError('UNSUPPORTED_CLIENT', undefined, error instanceof Error ? error.message : String(error), { cause: error });
    }
    this.scheduleWatchdog(this.settings.sessionTimeoutMilliseconds);
    const connected = await this.waitForConnection(this.settings.connectionTimeoutMilliseconds);
    if (!connected) {
      this.logger.warn(
        `not connected to ZooKeeper at ${this.settings.serverLists} after ${this.settings.connectionTimeoutMilliseconds} ms; still trying, jobs register when it answers`,
      );
      return false;
    }
    await this.ensureNamespace();
    return true;
  }

  private async ensureNamespace(): Promise<void> {
    await this.raw((c, cb) => c.mkdirp(`/${this.settings.namespace}`, this.acls, cb), `/${this.settings.namespace}`);
  }

  /** Resolves true when connected, false after `timeoutMs`. */
  waitForConnection(timeoutMs: number): Promise<boolean> {
    if (this.connected) return Promise.resolve(true);
    if (this.lifecycle === 'CLOSED') return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (value: boolean): void => {
        clearTimeout(timer);
        this.connectWaiters.delete(onConnect);
        resolve(value);
      };
      const onConnect = (): void => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.connectWaiters.add(onConnect);
    });
  }

  /** Closes the session: ephemeral nodes go at once. Pending calls fail. Idempotent. */
  async close(): Promise<void> {
    if (this.lifecycle === 'CLOSED') return;
    this.lifecycle = 'CLOSED';
    clearTimeout(this.lossTimer);
    clearInterval(this.watchdogTimer);
    const client = this.client;
    this.client = undefined;
    this.generation++;
    this.connected = false;
    if (client) {
      const closed = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2_000);
        client.once('disconnected', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      client.close();
      await closed;
    }
    this.failPending('CLOSED', 'the registry center was closed');
    for (const waiter of [...this.connectWaiters]) waiter();
  }

  // ---------------------------------------------------------------- connection state machine

  private openClient(): void {
    const generation = ++this.generation;
    this.generationConnected = false;
    const client = zookeeper.createClient(this.settings.serverLists, {
      sessionTimeout: this.settings.sessionTimeoutMilliseconds,
      spinDelay: this.settings.baseSleepTimeMilliseconds,
      retries: 0,
    });
    this.client = client;
    assertClientShape(client);
    streamlineClientIo(client);
    tapNotifications(client, (type, fullPath) => current() && this.dispatchPersistent(type, fullPath));
    if (this.settings.digest) client.addAuthInfo('digest', Buffer.from(this.settings.digest, 'utf8'));
    const current = (): boolean => generation === this.generation && this.lifecycle === 'STARTED';
    client.on('connected', () => current() && this.onConnected(client));
    client.on('disconnected', () => current() && this.onDisconnected());
    client.on('expired', () => current() && this.onLost('the server reported the session expired'));
    client.on('authenticationFailed', () => current() && this.logger.error('ZooKeeper rejected the digest credentials: check zookeeper.digest'));
    client.connect();
  }

  private onConnected(client: Client): void {
    clearTimeout(this.lossTimer);
    this.lossTimer = undefined;
    this.connected = true;
    this.lastReceivedAt = this.lastSentAt = Date.now();
    try {
      this.attachLivenessProbe(client);
    } catch (error) {
      // Never thrown into the client (it would crash the app): said loudly instead.
      this.logger.error(`the liveness watchdog cannot watch this connection: ${error instanceof Error ? error.message : String(error)}`);
    }
    // The server may grant less than we asked for: the watchdog runs on the negotiated timeout.
    this.scheduleWatchdog(client.getSessionTimeout());
    const firstOfGeneration = !this.generationConnected;
    this.generationConnected = true;
    this.sessionId = client.getSessionId().toString('hex');
    for (const waiter of [...this.connectWaiters]) waiter();
    if (!this.everConnected) {
      this.everConnected = true;
      this.logger.log(`connected to ${this.settings.serverLists}, session 0x${this.sessionId}, timeout ${client.getSessionTimeout()} ms`);
      this.emitState({ state: 'CONNECTED', newSession: true });
      return;
    }
    if (!firstOfGeneration) {
      this.logger.log(`reconnected, session 0x${this.sessionId} kept`);
      this.emitState({ state: 'RECONNECTED', newSession: false });
      return;
    }
    this.logger.log(`connected with a new session 0x${this.sessionId}; re-registering`);
    void this.ensureNamespace()
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
          this.logger.error(`re-registration after a new session failed: ${error instanceof Error ? error.message : String(error)}`);
        }
      }),
    );
  }

  private onDisconnected(): void {
    if (!this.connected) return;
    this.connected = false;
    const timeout = this.sessionTimeoutMs;
    // The server expires the session a session timeout after it last heard from us, which is about when we last
    // heard from it; count from there, not from when we noticed (a silent partition is noticed late). Then we
    // declare the session lost no later than the server can, and abort running items before a peer can start
    // them (Curator counts from the disconnect instead: CURATOR-405).
    const remaining = Math.max(0, this.lastReceivedAt + timeout - Date.now());
    this.logger.warn(`disconnected from ZooKeeper; the session is lost if not back within ${remaining} ms`);
    this.emitState({ state: 'SUSPENDED', newSession: false });
    clearTimeout(this.lossTimer);
    this.lossTimer = setTimeout(() => this.onLost(`no answer from ZooKeeper for a whole session timeout (${timeout} ms)`), remaining);
    this.lossTimer.unref();
  }

  private onLost(reason: string): void {
    if (this.lifecycle !== 'STARTED') return;
    clearTimeout(this.lossTimer);
    this.lossTimer = undefined;
    this.logger.warn(`session 0x${this.sessionId ?? '?'} lost: ${reason}; opening a new session`);
    this.connected = false;
    const old = this.client;
    this.failPending('SESSION_EXPIRED', `session lost: ${reason}`);
    this.emitState({ state: 'LOST', newSession: false });
    this.openClient();
    // Closing the old client really ends the session if the server still had it (silent partition).
    old?.close();
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

  /** node-zookeeper-client has no read timeout; watch the socket for received bytes ourselves. */
  private attachLivenessProbe(client: Client): void {
    const socket = connectedSocket(client);
    if ((socket as Socket & { __elasticJobProbe?: boolean }).__elasticJobProbe) return;
    (socket as Socket & { __elasticJobProbe?: boolean }).__elasticJobProbe = true;
    socket.on('data', () => {
      this.lastReceivedAt = Date.now();
    });
  }

  /** Six checks per session timeout: a ping goes out between 1/3 and 1/2 of it after the last request. */
  private scheduleWatchdog(sessionTimeoutMs: number): void {
    const period = Math.max(100, Math.floor(sessionTimeoutMs / 6));
    if (period === this.watchdogPeriodMs || this.lifecycle !== 'STARTED') return;
    clearInterval(this.watchdogTimer);
    this.watchdogPeriodMs = period;
    this.watchdogTimer = setInterval(() => this.checkLiveness(), period);
    this.watchdogTimer.unref();
  }

  /**
   * Both directions of the socket. Sending: the server expires a session that sent nothing for a session
   * timeout, whatever it received, so when nothing was sent for a third of it we ping, as ZooKeeper's Java
   * client does (it pings on idle *sends*; node-zookeeper-client only on an idle socket). Receiving: nothing for
   * 2/3 of it (pings are answered) is a silent partition.
   */
  private checkLiveness(): void {
    if (!this.connected || !this.client) return;
    const now = Date.now();
    const timeout = this.client.getSessionTimeout();
    let socket: Socket;
    try {
      socket = connectedSocket(this.client);
    } catch {
      return; // said when the connection was made (onConnected)
    }
    const written = socket.bytesWritten;
    if (written !== this.lastBytesWritten) {
      this.lastBytesWritten = written;
      this.lastSentAt = now;
    } else if (now - this.lastSentAt >= timeout / 3) {
      sendPing(this.client);
      this.lastSentAt = now;
    }
    const silentFor = now - this.lastReceivedAt;
    const limit = Math.floor((timeout * 2) / 3);
    if (silentFor <= limit) return;
    this.logger.warn(`nothing received from ZooKeeper for ${silentFor} ms (limit ${limit} ms): dropping the connection`);
    socket.destroy();
    this.onDisconnected();
  }

  private failPending(code: string, message: string): void {
    const fails = [...this.pending];
    this.pending.clear();
    for (const fail of fails) fail(new RegistryError(code, undefined, message));
  }

  // ---------------------------------------------------------------- promise API (namespace-relative paths)

  private full(path: string): string {
    return path === '/' ? `/${this.settings.namespace}` : `/${this.settings.namespace}${path}`;
  }

  private relative(fullPath: string): string {
    const prefix = `/${this.settings.namespace}`;
    return fullPath === prefix ? '/' : fullPath.startsWith(`${prefix}/`) ? fullPath.slice(prefix.length) : fullPath;
  }

  private raw<T>(
    call: (client: Client, callback: (error: unknown, result?: T) => void) => void,
    path: string | undefined,
    kind: 'reads' | 'writes' | 'watchRequests' = 'writes',
  ): Promise<T> {
    this.stats[kind]++;
    return new Promise<T>((resolve, reject) => {
      const client = this.client;
      if (!client || this.lifecycle !== 'STARTED') {
        reject(new RegistryError('CLOSED', path, `ZooKeeper registry center is ${this.lifecycle === 'CLOSED' ? 'closed' : 'not started'}`));
        return;
      }
      let settled = false;
      const fail = (error: RegistryError): void => {
        if (settled) return;
        settled = true;
        reject(error);
      };
      this.pending.add(fail);
      try {
        call(client, (error, result) => {
          this.pending.delete(fail);
          if (settled) return;
          settled = true;
          if (error) {
            const code = isZkException(error) ? error.name : 'SYSTEM_ERROR';
            reject(new RegistryError(code, path, `ZooKeeper ${code}${path ? ` on ${path}` : ''}`, { cause: error }));
          } else {
            resolve(result as T);
          }
        });
      } catch (error) {
        this.pending.delete(fail);
        fail(new RegistryError('BAD_ARGUMENTS', path, `ZooKeeper call rejected${path ? ` on ${path}` : ''}: ${String(error)}`, { cause: error }));
      }
    });
  }

  private zkWatcher(watcher: Watcher): (event: ZkEvent) => void {
    let wrapped = this.wrappedWatchers.get(watcher);
    if (!wrapped) {
      wrapped = (event: ZkEvent) => {
        this.stats.watchEvents++;
        const type = EVENT_TYPES[event.getType()];
        if (!type) return;
        try {
          watcher({ type, path: this.relative(event.getPath()) });
        } catch (error) {
          this.logger.error(`watcher on ${event.getPath()} failed: ${String(error)}`);
        }
      };
      this.wrappedWatchers.set(watcher, wrapped);
    }
    return wrapped;
  }

  /**
   * A ZooKeeper 3.6+ persistent recursive watch on `path` (which need not exist): `watcher` hears NODE_CREATED,
   * NODE_DATA_CHANGED and NODE_DELETED for the node and every descendant (never NODE_CHILDREN_CHANGED), and keeps
   * hearing them without being re-armed by a read. The server keeps it for the current connection only: call
   * again after every reconnection (RECONNECTED, new session or not), then re-read what matters, since events
   * are not replayed. Resolves once the server has confirmed.
   */
  async addPersistentRecursiveWatch(path: string, watcher: Watcher): Promise<void> {
    let watchers = this.persistentWatchers.get(path);
    if (!watchers) this.persistentWatchers.set(path, (watchers = new Set()));
    watchers.add(watcher);
    await this.raw<void>((c, cb) => sendAddWatch(c, this.full(path), PERSISTENT_RECURSIVE, (error) => cb(error)), path, 'watchRequests');
  }

  /**
   * Stops calling `watcher`. The server-side watch stays until the connection ends (removeWatches could answer
   * with an error code this client cannot parse, §2.5); its few notifications are dropped here.
   */
  removePersistentRecursiveWatch(path: string, watcher: Watcher): void {
    const watchers = this.persistentWatchers.get(path);
    watchers?.delete(watcher);
    if (watchers?.size === 0) this.persistentWatchers.delete(path);
  }

  private dispatchPersistent(type: number, fullPath: string): void {
    const eventType = EVENT_TYPES[type];
    if (!eventType || eventType === 'NODE_CHILDREN_CHANGED' || this.persistentWatchers.size === 0) return;
    const path = this.relative(fullPath);
    if (path === fullPath) return; // outside our namespace
    for (let root = path; ; root = root.slice(0, Math.max(1, root.lastIndexOf('/')))) {
      for (const watcher of this.persistentWatchers.get(root) ?? []) {
        this.stats.watchEvents++;
        try {
          watcher({ type: eventType, path });
        } catch (error) {
          this.logger.error(`persistent watcher on ${root} failed: ${String(error)}`);
        }
      }
      if (root === '/') return;
    }
  }

  /** The node's data and stat, or undefined when it does not exist. */
  async getData(path: string, watcher?: Watcher): Promise<NodeData | undefined> {
    try {
      return await this.raw<NodeData>(
        (c, cb) => {
          const done = (error: unknown, data?: Buffer, stat?: Stat): void =>
            cb(error, error ? undefined : { data: data ?? Buffer.alloc(0), stat: toStat(stat as Stat) });
          if (watcher) c.getData(this.full(path), this.zkWatcher(watcher), done);
          else c.getData(this.full(path), done);
        },
        path,
        'reads',
      );
    } catch (error) {
      if (registryErrorCode(error) === 'NO_NODE') return undefined;
      throw error;
    }
  }

  /** The node's children (unsorted), or undefined when it does not exist. */
  async getChildren(path: string, watcher?: Watcher): Promise<string[] | undefined> {
    try {
      return await this.raw<string[]>((c, cb) => {
        if (watcher) c.getChildren(this.full(path), this.zkWatcher(watcher), (e, children) => cb(e, children));
        else c.getChildren(this.full(path), (e, children) => cb(e, children));
      }, path, 'reads');
    } catch (error) {
      if (registryErrorCode(error) === 'NO_NODE') return undefined;
      throw error;
    }
  }

  /** The node's stat, or undefined. With a watcher: a data watch if it exists, an existence watch otherwise. */
  async exists(path: string, watcher?: Watcher): Promise<NodeStat | undefined> {
    const stat = await this.raw<Stat | null>((c, cb) => {
      if (watcher) c.exists(this.full(path), this.zkWatcher(watcher), (e, s) => cb(e, s));
      else c.exists(this.full(path), (e, s) => cb(e, s));
    }, path, 'reads');
    return stat ? toStat(stat) : undefined;
  }

  /** Creates a node; the parents must exist (see ensurePath). Returns the created path (namespace-relative). */
  async create(path: string, data: Buffer, mode: NodeMode = 'PERSISTENT'): Promise<string> {
    checkDataSize(path, data);
    const created = await this.raw<string>((c, cb) => c.create(this.full(path), data, this.acls, MODES[mode], cb), path);
    return this.relative(created);
  }

  /** Creates the node and any missing parents as PERSISTENT with empty data; existing nodes are left alone. */
  async ensurePath(path: string): Promise<void> {
    await this.raw<string>((c, cb) => c.mkdirp(this.full(path), this.acls, cb), path);
  }

  /** Creates (with parents) or overwrites a persistent node; safe against a peer creating it concurrently. */
  async persist(path: string, data: Buffer): Promise<void> {
    try {
      await this.setData(path, data);
    } catch (error) {
      if (registryErrorCode(error) !== 'NO_NODE') throw error;
      try {
        await this.createWithParents(path, data, 'PERSISTENT');
      } catch (createError) {
        if (registryErrorCode(createError) !== 'NODE_EXISTS') throw createError;
        await this.setData(path, data); // a peer created it between our two calls
      }
    }
  }

  /** Creates the node, making persistent parents as needed. NODE_EXISTS is passed to the caller. */
  async createWithParents(path: string, data: Buffer, mode: NodeMode): Promise<string> {
    try {
      return await this.create(path, data, mode);
    } catch (error) {
      if (registryErrorCode(error) !== 'NO_NODE') throw error;
      await this.ensurePath(path.slice(0, path.lastIndexOf('/')) || '/');
      return this.create(path, data, mode);
    }
  }

  async setData(path: string, data: Buffer): Promise<void> {
    checkDataSize(path, data);
    await this.raw<Stat>((c, cb) => c.setData(this.full(path), data, -1, cb), path);
  }

  /** Deletes the node; NO_NODE is not an error. */
  async remove(path: string): Promise<void> {
    try {
      await this.raw<void>((c, cb) => c.remove(this.full(path), -1, (e) => cb(e)), path);
    } catch (error) {
      if (registryErrorCode(error) !== 'NO_NODE') throw error;
    }
  }

  /** Deletes the node and its subtree, leaves first; missing nodes are not an error. */
  async removeRecursive(path: string): Promise<void> {
    const children = await this.getChildren(path);
    if (children === undefined) return;
    await Promise.all(children.map((child) => this.removeRecursive(`${path === '/' ? '' : path}/${child}`)));
    try {
      await this.raw<void>((c, cb) => c.remove(this.full(path), -1, (e) => cb(e)), path);
    } catch (error) {
      const code = registryErrorCode(error);
      if (code === 'NOT_EMPTY') return this.removeRecursive(path);
      if (code !== 'NO_NODE') throw error;
    }
  }

  /** All-or-nothing multi-op (ZooKeeper `multi`), versions honoured (written by us, not the client: its bug #67). */
  async transaction(ops: TransactionOp[]): Promise<void> {
    if (ops.length === 0) return;
    const bytes = ops.reduce((size, op) => size + multiOpBytes(op, this.aclBytes.length), 0);
    if (bytes > MAX_NODE_DATA_BYTES) {
      // The server would drop the connection on it (jute.maxbuffer): refuse here, with a reason.
      throw new RegistryError('REQUEST_TOO_LARGE', ops[0]?.path, `a multi request of ${ops.length} ops and ${bytes} bytes exceeds ZooKeeper's request limit; cut it with multiBatches()`);
    }
    const multi: MultiOp[] = ops.map((op) =>
      op.op === 'create' ? { op: 'create', path: this.full(op.path), data: op.data, flags: MODES[op.mode] } : { ...op, path: this.full(op.path) },
    );
    // Named by its first few paths: a batch of a thousand would make an unreadable log line.
    const described = ops.slice(0, 3).map((op) => op.path).join(', ') + (ops.length > 3 ? ` and ${ops.length - 3} more` : '');
    await this.raw<void>((c, cb) => sendMulti(c, multi, this.aclBytes, cb), described);
  }

  /** The ops cut, in order, into multi requests that fit ZooKeeper's request limit (see request-limits.ts). */
  multiBatches(ops: readonly TransactionOp[]): TransactionOp[][] {
    return multiBatches(ops, this.aclBytes.length);
  }

  /**
   * Curator's protected-mode EPHEMERAL_SEQUENTIAL create (docs/reference/zookeeper.md §1.7): the name carries
   * `_c_{uuid}-`, so after a connection loss we find our node instead of creating a second one, and a node
   * left by a dead session is deleted, never adopted. Missing parents are created (a Curator peer makes them
   * containers, which the server may reap between our calls).
   */
  async createProtectedEphemeralSequential(parent: string, name: string, data: Buffer, deadline: number): Promise<string> {
    let uuid = randomUUID();
    let session = this.sessionId;
    for (let attempt = 0; ; attempt++) {
      if (this.lifecycle !== 'STARTED') throw new RegistryError('CLOSED', parent, 'registry center closed');
      if (Date.now() > deadline) throw new RegistryError('OPERATION_TIMEOUT', parent, `could not create a protected node under ${parent} in time`);
      if (attempt > 0) {
        // The create may have succeeded with the answer lost: look for our node before creating again.
        if (!(await this.waitForConnection(Math.max(1, deadline - Date.now())))) continue;
        const children = (await this.getChildren(parent).catch(() => undefined)) ?? [];
        const found = children.find((child) => child.startsWith(`_c_${uuid}-`));
        if (found && session === this.sessionId) return `${parent}/${found}`;
        if (found) await this.remove(`${parent}/${found}`).catch(() => undefined);
        if (session !== this.sessionId) {
          uuid = randomUUID();
          session = this.sessionId;
        }
      }
      try {
        return await this.create(`${parent}/_c_${uuid}-${name}`, data, 'EPHEMERAL_SEQUENTIAL');
      } catch (error) {
        const code = registryErrorCode(error);
        if (code === 'NO_NODE') await this.ensurePath(parent).catch(() => undefined);
        else if (code !== 'CONNECTION_LOSS' && code !== 'SESSION_EXPIRED') throw error;
      }
    }
  }
}
