import { RegistryError, registryErrorCode } from '../../lib/errors/elastic-job.errors.js';
import { multiAcl } from '../../lib/registry/multi-request.js';
import { NamespacePaths } from '../../lib/registry/namespace-paths.js';
import type { RegistryCenter, RegistryStats } from '../../lib/registry/registry-center.js';
import type {
  ConnectionStateChange,
  NodeData,
  NodeMode,
  NodeStat,
  ReadAnswer,
  ReadRequest,
  TransactionOp,
  Watcher,
  WatchEventType,
} from '../../lib/registry/registry.types.js';
import { assertMultiRequestFits, assertNodeDataFits, multiBatches } from '../../lib/registry/request-limits.js';
import { createProtectedEphemeralSequential } from '../../lib/registry/protected-create.js';

/**
 * An in-memory ZooKeeper behind the `RegistryCenter` interface, for unit tests that check the kernel's rules in
 * milliseconds (with fake timers where time matters) instead of against a real server.
 *
 * `FakeZookeeper` is the server: one tree shared by every client, with ZooKeeper's node semantics (versions,
 * cversion, sequential names from the parent's cversion, ephemerals owned by a session, no children under an
 * ephemeral, atomic `multi`, one zxid per transaction, `mtime` from `Date.now()` so fake timers drive it).
 * `FakeRegistryCenter` is one client and its session, relative to a namespace; several share one server, as
 * several instances share an ensemble.
 *
 * What it keeps of the wire, because the kernel relies on it:
 * - answers and watch notifications reach a client asynchronously, in the order the server produced them, one
 *   per microtask, never inside the call that caused them; a writer hears its own notifications before its answer
 *   (the TreeCache's write-through counts on it);
 * - one notification per connection and change: a data watch, an exist watch and the persistent recursive watches
 *   covering the path share it; the client's persistent watchers hear every notification the connection receives,
 *   whatever watch caused it (as the library's tap on node-zookeeper-client does), NODE_CHILDREN_CHANGED aside;
 * - one-shot watches survive a reconnection of the same session (the client's SET_WATCHES): a change made while
 *   disconnected fires them on reconnection; persistent watches do not (the client cannot re-add them): the owner
 *   re-adds them after RECONNECTED;
 * - answers in flight when the connection drops are lost (CONNECTION_LOSS; the write itself may have happened).
 *
 * Simplified: requests made while disconnected fail at once with CONNECTION_LOSS (a real client may hold them
 * until the next connection attempt fails); no ACLs; the connection never drops unless a test says so.
 */

const NO_OWNER = '0000000000000000';
/** Taken before any test installs fake timers: idle() needs a real turn of the event loop. */
const realSetImmediate = globalThis.setImmediate;
/**
 * The ACL the real registry puts on created nodes without a digest (world:anyone, ALL), as a multi request carries it.
 */
const OPEN_ACL_BYTES = multiAcl([{ permission: 31, scheme: 'world', id: 'anyone' }]).length;

interface FakeNode {
  data: Buffer;
  version: number;
  cversion: number;
  children: Set<string>;
  ephemeralOwner: string;
  mzxid: bigint;
  mtime: number;
}

/** A change in the tree, full path: what the server's watch managers are told. */
interface Change {
  type: WatchEventType;
  path: string;
}

/** A failure of one op of a request; the client turns it into a RegistryError with its own (relative) path. */
class ServerFailure extends Error {
  constructor(
    readonly code: string,
    readonly fullPath: string,
  ) {
    super(`ZooKeeper ${code} on ${fullPath}`);
  }
}

type FullOp = TransactionOp & { ephemeralOwner?: string };

function parentOf(path: string): string {
  const index = path.lastIndexOf('/');
  return index <= 0 ? '/' : path.slice(0, index);
}

function checkPath(path: string): void {
  // The client refuses these before sending anything.
  if (
    !path.startsWith('/') ||
    (path.length > 1 && path.endsWith('/')) ||
    path.includes('//') ||
    path.includes('\u0000')
  ) {
    throw new ServerFailure('BAD_ARGUMENTS', path);
  }
}

function isSequential(mode: NodeMode): boolean {
  return mode === 'PERSISTENT_SEQUENTIAL' || mode === 'EPHEMERAL_SEQUENTIAL';
}

function isEphemeral(mode: NodeMode): boolean {
  return mode === 'EPHEMERAL' || mode === 'EPHEMERAL_SEQUENTIAL';
}

/** The shared tree (the server). Test code reads it with full paths (`/{namespace}/...`). */
export class FakeZookeeper {
  private readonly nodes = new Map<string, FakeNode>();
  private zxid = 0n;
  private nextSession = 1n;

  /** The zxid of the last change applied. */
  currentZxid(): bigint {
    return this.zxid;
  }
  /** Clients with a live session, by session id: they hear every change. */
  private readonly sessions = new Map<string, FakeRegistryCenter>();
  private readonly clients = new Set<FakeRegistryCenter>();

  constructor() {
    this.nodes.set('/', {
      data: Buffer.alloc(0),
      version: 0,
      cversion: 0,
      children: new Set(),
      ephemeralOwner: NO_OWNER,
      mzxid: 0n,
      mtime: Date.now(),
    });
  }

  /** A client of this server, not started. */
  client(namespace: string, options: FakeClientOptions = {}): FakeRegistryCenter {
    return new FakeRegistryCenter(this, namespace, options);
  }

  /** A started client (connected, namespace root created). */
  async connect(namespace: string, options: FakeClientOptions = {}): Promise<FakeRegistryCenter> {
    const client = this.client(namespace, options);
    await client.start();
    return client;
  }

  /** The node's data as UTF-8 and its stat, or undefined. */
  get(fullPath: string): { data: string; stat: NodeStat } | undefined {
    const node = this.nodes.get(fullPath);
    return node && { data: node.data.toString('utf8'), stat: this.stat(node) };
  }

  /** Every path at or below `fullPath`, sorted: for assertions and for dumping the tree when a test fails. */
  paths(fullPath = '/'): string[] {
    return [...this.nodes.keys()]
      .filter((path) => path === fullPath || path.startsWith(fullPath === '/' ? '/' : `${fullPath}/`))
      .sort();
  }

  /**
   * Resolves once every client has delivered everything, and what that woke has run and been answered, as far
   * as microtasks go: a real turn of the event loop (fake timers do not stop it) with nothing left to deliver.
   * Work waiting on a (fake) timer is not waited for.
   */
  async idle(): Promise<void> {
    do await new Promise<void>((resolve) => realSetImmediate(resolve));
    while ([...this.clients].some((client) => client.busy));
  }

  /** Session ids that are alive on the server. */
  liveSessions(): string[] {
    return [...this.sessions.keys()];
  }

  // ---------------------------------------------------------------- for FakeRegistryCenter

  /** @internal */
  attach(client: FakeRegistryCenter): void {
    this.clients.add(client);
  }

  /** @internal A new session for `client`. */
  openSession(client: FakeRegistryCenter): string {
    const id = (0x0100_0000_0000_0000n + this.nextSession++).toString(16).padStart(16, '0');
    this.sessions.set(id, client);
    return id;
  }

  /** @internal The session ends (closed or expired): its ephemerals go in one transaction, the others are told. */
  endSession(id: string): void {
    if (!this.sessions.delete(id)) return;
    const owned = [...this.nodes.entries()].filter(([, node]) => node.ephemeralOwner === id).map(([path]) => path);
    if (owned.length > 0)
      this.apply(
        owned.map((path) => ({ op: 'remove', path })),
        NO_OWNER,
      );
  }

  /** @internal Applies ops all or nothing (one zxid); throws ServerFailure of the first op that fails. */
  apply(ops: readonly FullOp[], session: string): Array<{ path: string; stat: NodeStat }> {
    const undo: Array<() => void> = [];
    const changes: Change[] = [];
    const zxid = this.zxid + 1n;
    let results: Array<{ path: string; stat: NodeStat }>;
    try {
      results = ops.map((op) => this.applyOne(op, session, zxid, undo, changes));
    } catch (error) {
      for (const step of undo.reverse()) step();
      throw error;
    }
    this.zxid = zxid;
    for (const change of changes) for (const client of [...this.sessions.values()]) client.serverChange(change);
    return results;
  }

  /** @internal */
  read(fullPath: string): { data: Buffer; stat: NodeStat; children: string[] } | undefined {
    checkPath(fullPath);
    const node = this.nodes.get(fullPath);
    return node && { data: Buffer.from(node.data), stat: this.stat(node), children: [...node.children] };
  }

  private stat(node: FakeNode): NodeStat {
    return {
      version: node.version,
      cversion: node.cversion,
      numChildren: node.children.size,
      ephemeralOwner: node.ephemeralOwner,
      mtime: node.mtime,
      mzxid: node.mzxid,
    };
  }

  private applyOne(
    op: FullOp,
    session: string,
    zxid: bigint,
    undo: Array<() => void>,
    changes: Change[],
  ): { path: string; stat: NodeStat } {
    const existing = this.nodes.get(op.path);
    if (op.op === 'create') {
      const parentPath = parentOf(op.path);
      const parent = this.nodes.get(parentPath);
      if (!parent) throw new ServerFailure('NO_NODE', op.path);
      if (parent.ephemeralOwner !== NO_OWNER) throw new ServerFailure('NO_CHILDREN_FOR_EPHEMERALS', op.path);
      // ZooKeeper names a sequential node after its parent's cversion, so deleted children's numbers are never reused.
      const path = isSequential(op.mode) ? `${op.path}${String(parent.cversion).padStart(10, '0')}` : op.path;
      checkPath(path);
      if (this.nodes.has(path)) throw new ServerFailure('NODE_EXISTS', path);
      const node: FakeNode = {
        data: Buffer.from(op.data),
        version: 0,
        cversion: 0,
        children: new Set(),
        ephemeralOwner: isEphemeral(op.mode) ? session : NO_OWNER,
        mzxid: zxid,
        mtime: Date.now(),
      };
      const name = path.slice(path.lastIndexOf('/') + 1);
      this.nodes.set(path, node);
      parent.children.add(name);
      parent.cversion++;
      undo.push(() => {
        this.nodes.delete(path);
        parent.children.delete(name);
        parent.cversion--;
      });
      changes.push({ type: 'NODE_CREATED', path }, { type: 'NODE_CHILDREN_CHANGED', path: parentPath });
      return { path, stat: this.stat(node) };
    }
    checkPath(op.path);
    if (!existing) throw new ServerFailure('NO_NODE', op.path);
    if (op.version !== undefined && op.version !== -1 && op.version !== existing.version)
      throw new ServerFailure('BAD_VERSION', op.path);
    if (op.op === 'check') return { path: op.path, stat: this.stat(existing) };
    if (op.op === 'setData') {
      const before = { data: existing.data, version: existing.version, mzxid: existing.mzxid, mtime: existing.mtime };
      existing.data = Buffer.from(op.data);
      existing.version++;
      existing.mzxid = zxid;
      existing.mtime = Date.now();
      undo.push(() => Object.assign(existing, before));
      changes.push({ type: 'NODE_DATA_CHANGED', path: op.path });
      return { path: op.path, stat: this.stat(existing) };
    }
    if (op.path === '/') throw new ServerFailure('BAD_ARGUMENTS', op.path);
    if (existing.children.size > 0) throw new ServerFailure('NOT_EMPTY', op.path);
    const parentPath = parentOf(op.path);
    const parent = this.nodes.get(parentPath)!;
    const name = op.path.slice(op.path.lastIndexOf('/') + 1);
    this.nodes.delete(op.path);
    parent.children.delete(name);
    parent.cversion++;
    undo.push(() => {
      this.nodes.set(op.path, existing);
      parent.children.add(name);
      parent.cversion--;
    });
    changes.push({ type: 'NODE_DELETED', path: op.path }, { type: 'NODE_CHILDREN_CHANGED', path: parentPath });
    return { path: op.path, stat: this.stat(existing) };
  }
}

export interface FakeClientOptions {
  /**
   * Negotiated session timeout; a connection down this long loses the session (as ZookeeperSession's loss timer).
   * Default 60000.
   */
  sessionTimeoutMs?: number;
}

/** Where the client stands: ZookeeperSession's states. CONNECTING: the session was lost, the new one not open yet. */
export type FakeClientState = 'LATENT' | 'CONNECTING' | 'CONNECTED' | 'SUSPENDED' | 'CLOSED';

/** A notification as the server sends it to one connection: full path, and the one-shot watchers it fires. */
interface Notification {
  type: WatchEventType;
  fullPath: string;
  oneShot: Watcher[];
}

type InboxItem =
  | { kind: 'answer'; deliver: () => void; lose: (error: RegistryError) => void }
  | { kind: 'notification'; notification: Notification }
  | { kind: 'state'; change: ConnectionStateChange; delivered: () => void }
  | { kind: 'mark'; delivered: () => void };

/**
 * One client of a FakeZookeeper: a session, its connection, its watches, relative to a namespace.
 * Connection control for tests: disconnect(), reconnect(), expire(), close().
 */
export class FakeRegistryCenter implements RegistryCenter {
  readonly stats: RegistryStats = { reads: 0, writes: 0, watchRequests: 0, watchEvents: 0 };
  readonly sessionTimeoutMs: number;
  /** Errors thrown by watchers, state listeners and new-session callbacks (the real client logs them and goes on). */
  readonly listenerErrors: unknown[] = [];
  private readonly paths: NamespacePaths;
  private state: FakeClientState = 'LATENT';
  private sessionId: string | undefined;
  private readonly inbox: InboxItem[] = [];
  private draining = false;
  /** Notifications the server owes us for one-shot watches that fired while we were disconnected. */
  private held: Notification[] = [];
  /** One-shot watches of the session (server side; the client re-registers them on reconnection), full paths. */
  private readonly dataWatches = new Map<string, Set<Watcher>>();
  private readonly childWatches = new Map<string, Set<Watcher>>();
  /** Persistent recursive watches the server holds for the current connection, full paths. */
  private readonly serverRoots = new Set<string>();
  /** Persistent watchers on the client side (PersistentWatchers), by relative root: they outlive connections. */
  private readonly persistentWatchers = new Map<string, Set<Watcher>>();
  private readonly stateListeners = new Set<(change: ConnectionStateChange) => void>();
  private readonly newSessionCallbacks = new Set<() => Promise<void> | void>();
  private readonly connectWaiters = new Set<() => void>();
  private lossTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly server: FakeZookeeper,
    readonly namespace: string,
    options: FakeClientOptions = {},
  ) {
    this.paths = new NamespacePaths(namespace);
    this.sessionTimeoutMs = options.sessionTimeoutMs ?? 60_000;
    server.attach(this);
  }

  get connectionState(): FakeClientState {
    return this.state;
  }

  /** Answers, notifications or state events are still to be delivered. */
  get busy(): boolean {
    return this.inbox.length > 0;
  }

  /** Resolves once everything queued for this client so far has been delivered (not what that sets off). */
  delivered(): Promise<void> {
    return new Promise((resolve) => this.enqueue({ kind: 'mark', delivered: resolve }));
  }

  // ---------------------------------------------------------------- connection control (tests)

  /**
   * Opens the session: CONNECTED is told, the namespace root is created. Resolves true, as the real start() does once
   * connected.
   */
  async start(): Promise<boolean> {
    if (this.state !== 'LATENT')
      throw new RegistryError('ILLEGAL_STATE', undefined, `registry center cannot start from ${this.state}`);
    this.sessionId = this.server.openSession(this);
    this.state = 'CONNECTED';
    this.wakeConnectWaiters();
    await this.tell({ state: 'CONNECTED', newSession: true });
    await this.ensurePath('/');
    return true;
  }

  /**
   * The connection drops: SUSPENDED is told, answers in flight are lost, persistent watches end with the
   * connection. The session lives on the server until `sessionTimeoutMs` passes without a reconnect (then expire()).
   */
  async disconnect(): Promise<void> {
    if (this.state !== 'CONNECTED') return;
    this.state = 'SUSPENDED';
    this.serverRoots.clear();
    this.dropInbox(
      (notification) => {
        // Sent but never received: the one-shot watch fires again once SET_WATCHES re-registers it.
        if (notification.oneShot.length > 0) this.held.push(notification);
      },
      new RegistryError('CONNECTION_LOSS', undefined, 'ZooKeeper CONNECTION_LOSS'),
    );
    clearTimeout(this.lossTimer);
    this.lossTimer = setTimeout(() => void this.expire(), this.sessionTimeoutMs);
    this.lossTimer.unref?.();
    await this.tell({ state: 'SUSPENDED', newSession: false });
  }

  /**
   * Connected again. SUSPENDED: the same session, RECONNECTED (newSession false), one-shot watches that fired
   * meanwhile are told; persistent watches must be re-added. CONNECTING (after `expire({ reconnect: false })`):
   * a new session, as expire() opens it.
   */
  async reconnect(): Promise<void> {
    if (this.state === 'CONNECTING') return this.openNewSession();
    if (this.state !== 'SUSPENDED') return;
    clearTimeout(this.lossTimer);
    this.state = 'CONNECTED';
    this.wakeConnectWaiters();
    const held = this.held;
    this.held = [];
    for (const notification of held) this.enqueue({ kind: 'notification', notification });
    await this.tell({ state: 'RECONNECTED', newSession: false });
  }

  /**
   * The session expires, in ZookeeperSession's order: SUSPENDED if still connected; the server ends the session
   * (its ephemerals are deleted, other sessions hear it); pending requests fail with SESSION_EXPIRED; LOST; then,
   * unless `reconnect: false`, a new session: CONNECTED inside (new id, waiters woken), the namespace root
   * ensured, RECONNECTED (newSession true), then the onNewSession callbacks. Resolves when they are done.
   */
  async expire(options: { reconnect?: boolean } = {}): Promise<void> {
    if (this.state === 'CONNECTED') await this.disconnect();
    if (this.state !== 'SUSPENDED') return;
    clearTimeout(this.lossTimer);
    this.lossTimer = undefined;
    if (this.sessionId) this.server.endSession(this.sessionId);
    this.state = 'CONNECTING';
    this.forgetSession(new RegistryError('SESSION_EXPIRED', undefined, 'session lost: expired'));
    await this.tell({ state: 'LOST', newSession: false });
    if (options.reconnect === false || (this.state as FakeClientState) !== 'CONNECTING') return; // a LOST listener may have closed us
    await this.openNewSession();
  }

  /**
   * Closes the session: its ephemerals go at once; pending requests fail with CLOSED. No state event (as the real one).
   */
  async close(): Promise<void> {
    if (this.state === 'CLOSED') return;
    const wasOpen = this.state !== 'LATENT';
    this.state = 'CLOSED';
    clearTimeout(this.lossTimer);
    if (wasOpen && this.sessionId) this.server.endSession(this.sessionId);
    this.forgetSession(new RegistryError('CLOSED', undefined, 'the registry center was closed'));
    this.wakeConnectWaiters();
  }

  // ---------------------------------------------------------------- connection view

  isConnected(): boolean {
    return this.state === 'CONNECTED';
  }

  getSessionId(): string | undefined {
    return this.sessionId;
  }

  /** The fake server applies every change before it answers: all it has done is seen. */
  seenZxid(): bigint {
    return this.server.currentZxid();
  }

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

  onStateChange(listener: (change: ConnectionStateChange) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  onNewSession(callback: () => Promise<void> | void): () => void {
    this.newSessionCallbacks.add(callback);
    return () => this.newSessionCallbacks.delete(callback);
  }

  // ---------------------------------------------------------------- reads

  getData(path: string, watcher?: Watcher): Promise<NodeData | undefined> {
    return this.request('reads', path, () => {
      const full = this.paths.full(path);
      const node = this.server.read(full);
      // ZooKeeper sets no watch when getData finds no node.
      if (node && watcher) this.addOneShot(this.dataWatches, full, watcher);
      return node && { data: node.data, stat: node.stat };
    });
  }

  getChildren(path: string, watcher?: Watcher): Promise<string[] | undefined> {
    return this.request('reads', path, () => {
      const full = this.paths.full(path);
      const node = this.server.read(full);
      if (node && watcher) this.addOneShot(this.childWatches, full, watcher);
      return node?.children;
    });
  }

  exists(path: string, watcher?: Watcher): Promise<NodeStat | undefined> {
    return this.request('reads', path, () => {
      const full = this.paths.full(path);
      const node = this.server.read(full);
      // A data watch if it exists, an exist watch otherwise: both fire on the node's NODE_* events.
      if (watcher) this.addOneShot(this.dataWatches, full, watcher);
      return node?.stat;
    });
  }

  /**
   * As the registry center reads on a server without multiRead: one getData or getChildren each (through the
   * methods, so that a test watching or failing single reads sees these too).
   */
  readMany(reads: readonly ReadRequest[]): Promise<ReadAnswer[]> {
    return Promise.all(
      reads.map((read): Promise<ReadAnswer> =>
        read.what === 'data' ? this.getData(read.path) : this.getChildren(read.path),
      ),
    );
  }

  // ---------------------------------------------------------------- writes

  async create(path: string, data: Buffer, mode: NodeMode = 'PERSISTENT'): Promise<string> {
    assertNodeDataFits(path, data);
    return this.request('writes', path, () => {
      const [created] = this.server.apply([{ op: 'create', path: this.paths.full(path), data, mode }], this.sessionId!);
      return this.paths.relative(created!.path);
    });
  }

  /** A persistent node here: the fake server never reaps containers. */
  async createContainer(path: string): Promise<void> {
    await this.create(path, Buffer.alloc(0), 'PERSISTENT');
  }

  ensurePath(path: string): Promise<void> {
    return this.request('writes', path, () => this.mkdirs(this.paths.full(path)));
  }

  /** As NodeWrites.persist: setData, else create with parents, else (a peer created it meanwhile) setData. */
  async persist(path: string, data: Buffer): Promise<void> {
    try {
      await this.setData(path, data);
    } catch (error) {
      if (registryErrorCode(error) !== 'NO_NODE') throw error;
      try {
        await this.createWithParents(path, data, 'PERSISTENT');
      } catch (createError) {
        if (registryErrorCode(createError) !== 'NODE_EXISTS') throw createError;
        await this.setData(path, data);
      }
    }
  }

  /** As NodeWrites.createWithParents: create; on NO_NODE, mkdirs the parent and create again. */
  async createWithParents(path: string, data: Buffer, mode: NodeMode): Promise<string> {
    try {
      return await this.create(path, data, mode);
    } catch (error) {
      if (registryErrorCode(error) !== 'NO_NODE') throw error;
      await this.ensurePath(parentOf(path));
      return this.create(path, data, mode);
    }
  }

  async setData(path: string, data: Buffer): Promise<NodeStat> {
    assertNodeDataFits(path, data);
    return this.request(
      'writes',
      path,
      () => this.server.apply([{ op: 'setData', path: this.paths.full(path), data }], this.sessionId!)[0]!.stat,
    );
  }

  async remove(path: string): Promise<void> {
    try {
      await this.request(
        'writes',
        path,
        () => void this.server.apply([{ op: 'remove', path: this.paths.full(path) }], this.sessionId!),
      );
    } catch (error) {
      if (registryErrorCode(error) !== 'NO_NODE') throw error;
    }
  }

  /**
   * As NodeWrites.removeRecursive: children first, concurrently; NOT_EMPTY (a child added meanwhile) goes round again.
   */
  async removeRecursive(path: string): Promise<void> {
    const children = await this.getChildren(path);
    if (children === undefined) return;
    await Promise.all(children.map((child) => this.removeRecursive(`${path === '/' ? '' : path}/${child}`)));
    try {
      await this.request(
        'writes',
        path,
        () => void this.server.apply([{ op: 'remove', path: this.paths.full(path) }], this.sessionId!),
      );
    } catch (error) {
      const code = registryErrorCode(error);
      if (code === 'NOT_EMPTY') return this.removeRecursive(path);
      if (code !== 'NO_NODE') throw error;
    }
  }

  coalescedTransaction(ops: readonly TransactionOp[]): Promise<void> {
    return this.transaction(ops);
  }

  async transaction(ops: readonly TransactionOp[]): Promise<void> {
    if (ops.length === 0) return;
    assertMultiRequestFits(ops, OPEN_ACL_BYTES, Buffer.byteLength(this.paths.full('/')));
    await this.request(
      'writes',
      ops[0]!.path,
      () =>
        void this.server.apply(
          ops.map((op) => ({ ...op, path: this.paths.full(op.path) })),
          this.sessionId!,
        ),
    );
  }

  multiBatches(ops: readonly TransactionOp[], leading: readonly TransactionOp[] = []): TransactionOp[][] {
    return multiBatches(ops, OPEN_ACL_BYTES, Buffer.byteLength(this.paths.full('/')), leading);
  }

  /** The library's own recipe (protected-create.ts), run against this fake. */
  createProtectedEphemeralSequential(parent: string, name: string, data: Buffer, deadline: number): Promise<string> {
    return createProtectedEphemeralSequential(this, parent, name, data, deadline);
  }

  /** Started and not closed. */
  isOpen(): boolean {
    return this.state !== 'LATENT' && this.state !== 'CLOSED';
  }

  // ---------------------------------------------------------------- persistent recursive watches

  addPersistentRecursiveWatch(path: string, watcher: Watcher): Promise<void> {
    let watchers = this.persistentWatchers.get(path);
    if (!watchers) this.persistentWatchers.set(path, (watchers = new Set()));
    watchers.add(watcher);
    return this.request('watchRequests', path, () => void this.serverRoots.add(this.paths.full(path)));
  }

  /** Client side only: the server's watch stays until the connection ends (as PersistentWatchers.remove). */
  removePersistentRecursiveWatch(path: string, watcher: Watcher): void {
    const watchers = this.persistentWatchers.get(path);
    watchers?.delete(watcher);
    if (watchers?.size === 0) this.persistentWatchers.delete(path);
  }

  // ---------------------------------------------------------------- the server's side of this session

  /** @internal A change in the tree: which watches of this session it fires, and whether the connection hears it. */
  serverChange(change: Change): void {
    if (this.state === 'LATENT' || this.state === 'CLOSED' || this.state === 'CONNECTING') return;
    const oneShot: Watcher[] = [];
    const take = (watches: Map<string, Set<Watcher>>): void => {
      const watchers = watches.get(change.path);
      if (!watchers) return;
      watches.delete(change.path);
      for (const watcher of watchers) if (!oneShot.includes(watcher)) oneShot.push(watcher);
    };
    if (change.type === 'NODE_CHILDREN_CHANGED') take(this.childWatches);
    else take(this.dataWatches);
    if (change.type === 'NODE_DELETED') take(this.childWatches);
    const connected = this.state === 'CONNECTED';
    const recursive =
      connected &&
      change.type !== 'NODE_CHILDREN_CHANGED' &&
      [...this.serverRoots].some(
        (root) => change.path === root || change.path.startsWith(root === '/' ? '/' : `${root}/`),
      );
    if (oneShot.length === 0 && !recursive) return;
    const notification: Notification = { type: change.type, fullPath: change.path, oneShot };
    if (connected) this.enqueue({ kind: 'notification', notification });
    else this.held.push(notification);
  }

  // ---------------------------------------------------------------- internals

  /**
   * One request: counted as the real transport counts it, run against the server now, its answer delivered in
   * order with the notifications it caused (those first).
   */
  private request<T>(kind: keyof RegistryStats, path: string, run: () => T): Promise<T> {
    this.stats[kind]++;
    return new Promise<T>((resolve, reject) => {
      const unavailable = this.unavailable(path);
      if (unavailable) {
        reject(unavailable);
        return;
      }
      let deliver: () => void;
      try {
        const value = run();
        deliver = () => resolve(value);
      } catch (error) {
        const failure =
          error instanceof ServerFailure
            ? new RegistryError(
                error.code,
                this.paths.relative(error.fullPath),
                `ZooKeeper ${error.code} on ${this.paths.relative(error.fullPath)}`,
              )
            : error;
        deliver = () => reject(failure);
      }
      this.enqueue({ kind: 'answer', deliver, lose: reject });
    });
  }

  private unavailable(path: string): RegistryError | undefined {
    if (this.state === 'CONNECTED') return undefined;
    if (this.state === 'LATENT' || this.state === 'CLOSED') {
      return new RegistryError(
        'CLOSED',
        path,
        `ZooKeeper registry center is ${this.state === 'CLOSED' ? 'closed' : 'not started'}`,
      );
    }
    return new RegistryError('CONNECTION_LOSS', path, `ZooKeeper CONNECTION_LOSS on ${path}`);
  }

  /** mkdirp: each missing node on the way created persistent and empty, each its own transaction. */
  private mkdirs(fullPath: string): void {
    checkPath(fullPath);
    const parts = fullPath.split('/').filter((part) => part !== '');
    let path = '';
    for (const part of parts) {
      path += `/${part}`;
      if (this.server.read(path)) continue;
      this.server.apply([{ op: 'create', path, data: Buffer.alloc(0), mode: 'PERSISTENT' }], this.sessionId!);
    }
  }

  private addOneShot(watches: Map<string, Set<Watcher>>, fullPath: string, watcher: Watcher): void {
    let watchers = watches.get(fullPath);
    if (!watchers) watches.set(fullPath, (watchers = new Set()));
    watchers.add(watcher);
  }

  private async openNewSession(): Promise<void> {
    this.sessionId = this.server.openSession(this);
    this.state = 'CONNECTED';
    this.wakeConnectWaiters();
    // ZookeeperSession's prepareNewSession: the namespace root, before RECONNECTED is told.
    await this.ensurePath('/').catch((error: unknown) => this.listenerErrors.push(error));
    await this.tell({ state: 'RECONNECTED', newSession: true });
    await Promise.all(
      [...this.newSessionCallbacks].map(async (callback) => {
        try {
          await callback();
        } catch (error) {
          this.listenerErrors.push(error);
        }
      }),
    );
  }

  /** The session is gone (lost or closed): its watches, what it was owed and its answers in flight with it. */
  private forgetSession(error: RegistryError): void {
    this.dataWatches.clear();
    this.childWatches.clear();
    this.serverRoots.clear();
    this.held = [];
    this.dropInbox(() => undefined, error);
  }

  /** Answers in flight fail with `error`; notifications go to `keep`; state events stay (they are the client's own). */
  private dropInbox(keep: (notification: Notification) => void, error: RegistryError): void {
    const items = this.inbox.splice(0);
    for (const item of items) {
      if (item.kind === 'answer') item.lose(error);
      else if (item.kind === 'notification') keep(item.notification);
      else this.inbox.push(item);
    }
  }

  /** Tells the state listeners, in order with what is already in the inbox; resolves once they have heard it. */
  private tell(change: ConnectionStateChange): Promise<void> {
    return new Promise((resolve) => this.enqueue({ kind: 'state', change, delivered: resolve }));
  }

  private enqueue(item: InboxItem): void {
    this.inbox.push(item);
    if (this.draining) return;
    this.draining = true;
    queueMicrotask(() => this.drainOne());
  }

  /** One item per microtask: what an answer wakes runs before the next notification, as with separate packets. */
  private drainOne(): void {
    const item = this.inbox.shift();
    if (!item) {
      this.draining = false;
      return;
    }
    try {
      this.deliver(item);
    } finally {
      if (this.inbox.length > 0) queueMicrotask(() => this.drainOne());
      else this.draining = false;
    }
  }

  private deliver(item: InboxItem): void {
    if (item.kind === 'answer') return item.deliver();
    if (item.kind === 'mark') return item.delivered();
    if (item.kind === 'state') {
      for (const listener of [...this.stateListeners]) this.guard(() => listener(item.change));
      return item.delivered();
    }
    const { type, fullPath, oneShot } = item.notification;
    // The library's tap: every notification of the connection reaches the persistent watchers covering it.
    if (type !== 'NODE_CHILDREN_CHANGED' && this.persistentWatchers.size > 0 && this.paths.isInside(fullPath)) {
      const path = this.paths.relative(fullPath);
      for (let root = path; ; root = root.slice(0, Math.max(1, root.lastIndexOf('/')))) {
        for (const watcher of [...(this.persistentWatchers.get(root) ?? [])]) {
          this.stats.watchEvents++;
          this.guard(() => watcher({ type, path }));
        }
        if (root === '/') break;
      }
    }
    for (const watcher of oneShot) {
      this.stats.watchEvents++;
      this.guard(() => watcher({ type, path: this.paths.relative(fullPath) }));
    }
  }

  private guard(call: () => void): void {
    try {
      call();
    } catch (error) {
      this.listenerErrors.push(error);
    }
  }

  private wakeConnectWaiters(): void {
    for (const waiter of [...this.connectWaiters]) waiter();
  }
}
