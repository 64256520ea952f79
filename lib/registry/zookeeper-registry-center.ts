import { TransactionCoalescer } from './transaction-coalescer.js';
import { Logger } from '@nestjs/common';
import { describeError, isConnectionTrouble, RegistryError } from '../errors/elastic-job.errors.js';
import type { ZookeeperConfiguration } from './zookeeper-configuration.js';
import { NamespacePaths } from './namespace-paths.js';
import { parseServerLists } from './zookeeper-names.js';
import { NodeWrites } from './node-writes.js';
import { PersistentWatchers } from './persistent-watchers.js';
import { createProtectedEphemeralSequential } from './protected-create.js';
import type { RegistryCenter, RegistryStats } from './registry-center.js';
import type {
  ConnectionStateChange,
  NodeData,
  NodeMode,
  NodeStat,
  ReadAnswer,
  ReadRequest,
  TransactionOp,
  Watcher,
} from './registry.types.js';
import { ReadCoalescer } from './read-coalescer.js';
import { nodeAcl } from './zookeeper-client.adapter.js';
import { diagnoseServers } from './connection-diagnosis.js';
import { ZookeeperSession, type SessionState } from './zookeeper-session.js';
import { resolveZookeeperSettings, type ZookeeperSettings } from './zookeeper-settings.js';
import { ZookeeperTransport } from './zookeeper-transport.js';

/** Kept here too for the tests and tools that import it from the registry center. */
export { registryErrorCode } from '../errors/elastic-job.errors.js';

/**
 * The registry center: one ZooKeeper session per process, shared by every job, put together from its parts:
 * - the session (zookeeper-session.ts): connection state, session loss, liveness watchdog, state events;
 * - the transport (zookeeper-transport.ts): single requests as promises, namespace-relative, typed errors;
 * - the recipes: create-with-parents and friends (node-writes.ts), protected creates (protected-create.ts),
 *   persistent recursive watches (persistent-watchers.ts); the leader latch and the tree cache are built on
 *   the `RegistryCenter` interface by their users.
 * Only zookeeper-client.adapter.ts touches node-zookeeper-client. Digest ACL on every created node.
 */
export class ZookeeperRegistryCenter implements RegistryCenter {
  private readonly logger = new Logger('ElasticJob:ZooKeeper');
  readonly settings: Readonly<ZookeeperSettings>;
  private readonly paths: NamespacePaths;
  private readonly session: ZookeeperSession;
  private readonly transport: ZookeeperTransport;
  private readonly writes: NodeWrites;
  private readonly watches: PersistentWatchers;

  constructor(config: ZookeeperConfiguration) {
    this.settings = resolveZookeeperSettings(config);
    this.paths = new NamespacePaths(this.settings.namespace);
    const acl = nodeAcl(this.settings.digest);
    this.session = new ZookeeperSession(this.settings, acl, {
      onNotification: (notification) => this.watches.dispatch(notification),
      prepareNewSession: async () => void (await this.ensureNamespace()),
    });
    const chroot = parseServerLists(this.settings.serverLists);
    const pathPrefixBytes =
      Buffer.byteLength(`/${this.settings.namespace}`) +
      (typeof chroot === 'string' ? 0 : Buffer.byteLength(chroot.chroot));
    this.transport = new ZookeeperTransport(this.session, this.paths, acl, pathPrefixBytes);
    this.writes = new NodeWrites(this.transport);
    this.watches = new PersistentWatchers(this.transport, this.paths, this.transport.stats);
  }

  get stats(): RegistryStats {
    return this.transport.stats;
  }

  // ---------------------------------------------------------------- lifecycle and connection view

  get namespace(): string {
    return this.settings.namespace;
  }

  get sessionTimeoutMs(): number {
    return this.session.sessionTimeoutMs;
  }

  /** Where the session stands (LATENT, CONNECTING, CONNECTED, SUSPENDED, CLOSED). */
  get sessionState(): SessionState {
    return this.session.current;
  }

  isConnected(): boolean {
    return this.session.isConnected();
  }

  /** Started and not closed. */
  isOpen(): boolean {
    return this.session.isOpen();
  }

  getSessionId(): string | undefined {
    return this.session.sessionId;
  }

  seenZxid(): bigint {
    return this.session.watermark.value();
  }

  /** For fault tests: the current session's id and password, to end the session from another client. */
  getSessionCredentials(): { sessionId: Buffer; sessionPassword: Buffer } | undefined {
    return this.session.credentials();
  }

  onStateChange(listener: (change: ConnectionStateChange) => void): () => void {
    return this.session.onStateChange(listener);
  }

  onNewSession(callback: () => Promise<void> | void): () => void {
    return this.session.onNewSession(callback);
  }

  waitForConnection(timeoutMs: number): Promise<boolean> {
    return this.session.waitForConnection(timeoutMs);
  }

  /**
   * Starts connecting. Resolves true once connected (namespace root ensured), or false when
   * `connectionTimeoutMilliseconds` passes first; the client keeps trying in the background either way.
   * Throws `RegistryError('UNSUPPORTED_CLIENT')` when the installed client lacks what this library relies on.
   */
  /**
   * A started registry center, or a RegistryError (`CONNECTION_LOSS`) naming the servers and what to check
   * (`hint`) when ZooKeeper does not answer within the connection timeout. The client is closed then, without
   * waiting: one that never connected waits 2 s for a disconnection that never comes.
   */
  static async open(config: ZookeeperConfiguration, hint?: string): Promise<ZookeeperRegistryCenter> {
    const registry = new ZookeeperRegistryCenter(config);
    let connected = false;
    try {
      connected = await registry.start();
    } finally {
      if (!connected) void registry.close();
    }
    if (connected) return registry;
    throw new RegistryError(
      'CONNECTION_LOSS',
      undefined,
      `could not connect to ZooKeeper at ${registry.settings.serverLists} within ` +
        `${registry.settings.connectionTimeoutMilliseconds} ms${hint ? `: ${hint}` : ''}`,
    );
  }

  async start(): Promise<boolean> {
    // Said before the wait: with ZooKeeper away, nothing else is logged until the wait ends (docs/operations/runbook.md).
    this.logger.log(
      `connecting to ZooKeeper at ${this.settings.serverLists} (namespace '${this.settings.namespace}'); waiting up ` +
        `to ${this.settings.connectionTimeoutMilliseconds} ms for it (zookeeper.connectionTimeoutMilliseconds)`,
    );
    this.session.start();
    const connected = await this.session.waitForConnection(this.settings.connectionTimeoutMilliseconds);
    if (!connected) {
      const reasons = this.isOpen() ? await diagnoseServers(this.settings.serverLists) : [];
      // It may have connected during the diagnosis: CONNECTED was told then, to no one who waits for it.
      if (this.session.isConnected()) return this.ensureNamespace();
      this.logger.warn(
        `not connected to ZooKeeper at ${this.settings.serverLists} after ` +
          `${this.settings.connectionTimeoutMilliseconds} ms${reasons.length > 0 ? ` (${reasons.join('; ')})` : ''}` +
          `; still trying, jobs register when it answers`,
      );
      return false;
    }
    return this.ensureNamespace();
  }

  /** Closes the session: ephemeral nodes go at once. Pending calls fail. Idempotent. */
  close(): Promise<void> {
    return this.session.close();
  }

  /**
   * The namespace's root node, made once connected. False when the connection went before ZooKeeper answered: the
   * app goes on as when ZooKeeper is away at start (its jobs register when it answers, and their writes make the
   * root with their parents). Throwing here crashed the app's bootstrap on a connection cut at that moment
   * (test/faults/chaos-run.ts met it), which ZooKeeper trouble must never do.
   */
  private async ensureNamespace(): Promise<boolean> {
    try {
      await this.transport.mkdirs('/');
      return true;
    } catch (error) {
      if (!isConnectionTrouble(error)) throw error;
      this.logger.warn(
        `connected to ZooKeeper at ${this.settings.serverLists}, but the connection went before the namespace ` +
          `'${this.settings.namespace}' was made (${describeError(error)}); still trying, jobs register when it answers`,
      );
      return false;
    }
  }

  // ---------------------------------------------------------------- reads, writes, watches

  getData(path: string, watcher?: Watcher): Promise<NodeData | undefined> {
    return this.transport.getData(path, watcher);
  }

  getChildren(path: string, watcher?: Watcher): Promise<string[] | undefined> {
    return this.transport.getChildren(path, watcher);
  }

  exists(path: string, watcher?: Watcher): Promise<NodeStat | undefined> {
    return this.transport.exists(path, watcher);
  }

  /** Reads sent with the others asked for in the same tick as few multiRead requests (read-coalescer.ts). */
  readMany(reads: readonly ReadRequest[]): Promise<ReadAnswer[]> {
    this.readCoalescer ??= new ReadCoalescer((batch) => this.transport.readMany(batch));
    return this.readCoalescer.submit(reads);
  }
  private readCoalescer: ReadCoalescer | undefined;

  create(path: string, data: Buffer, mode: NodeMode = 'PERSISTENT'): Promise<string> {
    return this.transport.create(path, data, mode);
  }

  createContainer(path: string): Promise<void> {
    return this.transport.createContainer(path);
  }

  ensurePath(path: string): Promise<void> {
    return this.transport.mkdirs(path);
  }

  persist(path: string, data: Buffer): Promise<void> {
    return this.writes.persist(path, data);
  }

  createWithParents(path: string, data: Buffer, mode: NodeMode): Promise<string> {
    return this.writes.createWithParents(path, data, mode);
  }

  setData(path: string, data: Buffer): Promise<NodeStat> {
    return this.transport.setData(path, data);
  }

  remove(path: string): Promise<void> {
    return this.writes.remove(path);
  }

  removeRecursive(path: string): Promise<void> {
    return this.writes.removeRecursive(path);
  }

  transaction(ops: readonly TransactionOp[]): Promise<void> {
    return this.transport.transaction(ops);
  }

  /** A transaction sent with the others asked for in the same tick (transaction-coalescer.ts); same meaning. */
  coalescedTransaction(ops: readonly TransactionOp[]): Promise<void> {
    this.coalescer ??= new TransactionCoalescer(
      (batch) => this.transport.transaction(batch),
      (batch) => this.transport.requestBytes(batch),
    );
    return this.coalescer.submit(ops);
  }
  private coalescer: TransactionCoalescer | undefined;

  multiBatches(ops: readonly TransactionOp[], leading: readonly TransactionOp[] = []): TransactionOp[][] {
    return this.transport.multiBatches(ops, leading);
  }

  createProtectedEphemeralSequential(parent: string, name: string, data: Buffer, deadline: number): Promise<string> {
    return createProtectedEphemeralSequential(this, parent, name, data, deadline);
  }

  addPersistentRecursiveWatch(path: string, watcher: Watcher): Promise<void> {
    return this.watches.add(path, watcher);
  }

  removePersistentRecursiveWatch(path: string, watcher: Watcher): void {
    this.watches.remove(path, watcher);
  }
}
