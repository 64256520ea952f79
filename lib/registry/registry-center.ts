import { RegistryError } from '../errors/elastic-job.errors.js';
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

/** Requests sent, by kind, and watch events heard: what a firing costs, for benchmarks and operators. */
export interface RegistryStats {
  reads: number;
  writes: number;
  watchRequests: number;
  watchEvents: number;
}

/** The session as its users see it: Curator's connection states, never the client. */
export interface ConnectionView {
  /** The namespace every path is relative to (`/{namespace}` is `/`). */
  readonly namespace: string;
  /** Negotiated session timeout (the requested one until the first connect). */
  readonly sessionTimeoutMs: number;
  isConnected(): boolean;
  /** The current session id as 16 hex digits, compared with `NodeStat.ephemeralOwner`. */
  getSessionId(): string | undefined;
  /**
   * The highest zxid read from ZooKeeper so far: every change at or below it had happened before now
   * (zxid-watermark.ts). Optional: a registry center without it orders nothing by it.
   */
  seenZxid?(): bigint;
  /** Resolves true when connected, false after `timeoutMs` or when closed. */
  waitForConnection(timeoutMs: number): Promise<boolean>;
  /** CONNECTED, SUSPENDED, RECONNECTED (same or new session), LOST, in order. Returns the unsubscribe call. */
  onStateChange(listener: (change: ConnectionStateChange) => void): () => void;
  /** After every new session but the first, once caches have been told (RECONNECTED, new session). */
  onNewSession(callback: () => Promise<void> | void): () => void;
}

/** Reads straight from ZooKeeper. Missing nodes are `undefined`, never an error. */
export interface RegistryReads {
  getData(path: string, watcher?: Watcher): Promise<NodeData | undefined>;
  /** Unsorted. */
  getChildren(path: string, watcher?: Watcher): Promise<string[] | undefined>;
  /** With a watcher: a data watch if it exists, an existence watch otherwise. */
  exists(path: string, watcher?: Watcher): Promise<NodeStat | undefined>;
  /**
   * Many reads without watches, answered in the order asked (a missing node: undefined). Reads asked for in the same
   * tick share ZooKeeper `multiRead` requests (3.6+; one request each on a server without it), so they are sent a
   * tick later than a single read would be: not for a read that must follow a write of the same tick.
   */
  readMany(reads: readonly ReadRequest[]): Promise<ReadAnswer[]>;
}

/** Writes. Errors are `RegistryError`s carrying ZooKeeper's error name (`NODE_EXISTS`, `NO_NODE`, ...). */
export interface RegistryWrites {
  /** The parents must exist. Returns the created path (a sequential node's name included). */
  create(path: string, data: Buffer, mode?: NodeMode): Promise<string>;
  /**
   * An empty container node (the parents must exist): the server deletes it once it has had children and has
   * none left, as Curator makes latch directories. NODE_EXISTS is an error here.
   */
  createContainer(path: string): Promise<void>;
  /** Creates the node and any missing parents, persistent and empty; existing nodes are left alone. */
  ensurePath(path: string): Promise<void>;
  /** Creates (with parents) or overwrites a persistent node; safe against a peer creating it concurrently. */
  persist(path: string, data: Buffer): Promise<void>;
  /** Creates the node, making persistent parents as needed. NODE_EXISTS is passed to the caller. */
  createWithParents(path: string, data: Buffer, mode: NodeMode): Promise<string>;
  /** Overwrites the data (any version); returns the node's new stat. */
  setData(path: string, data: Buffer): Promise<NodeStat>;
  /** NO_NODE is not an error. */
  remove(path: string): Promise<void>;
  /** The node and its subtree, leaves first; missing nodes are not an error. */
  removeRecursive(path: string): Promise<void>;
  /** All-or-nothing `multi`, versions honoured; it must fit one request (see multiBatches). */
  transaction(ops: readonly TransactionOp[]): Promise<void>;
  /**
   * The same transaction, sent with others asked for in the same tick as one multi request when they fit (a
   * combined request that fails is sent again transaction by transaction): for writes many jobs make at one instant.
   */
  coalescedTransaction(ops: readonly TransactionOp[]): Promise<void>;
  /**
   * The ops cut, in order, into multi requests that fit ZooKeeper's request limit, paths measured as sent
   * (namespace and chroot included). `leading` ops start every batch and count towards its limits.
   */
  multiBatches(ops: readonly TransactionOp[], leading?: readonly TransactionOp[]): TransactionOp[][];
  /** Curator's protected-mode EPHEMERAL_SEQUENTIAL create (`_c_{uuid}-{name}`), retried until `deadline`. */
  createProtectedEphemeralSequential(parent: string, name: string, data: Buffer, deadline: number): Promise<string>;
}

/** ZooKeeper 3.6+ persistent recursive watches (NODE_CREATED, NODE_DATA_CHANGED, NODE_DELETED; never children). */
export interface RegistryWatches {
  /**
   * For the current connection only: call again after every RECONNECTED, then re-read what matters (events
   * are not replayed). Resolves once the server has confirmed.
   */
  addPersistentRecursiveWatch(path: string, watcher: Watcher): Promise<void>;
  removePersistentRecursiveWatch(path: string, watcher: Watcher): void;
}

/**
 * What the kernel, the recipes and the coming operator API see of ZooKeeper: namespace-relative reads, writes,
 * `multi`, recursive watches and a connection view. `ZookeeperRegistryCenter` is the implementation; tests may
 * put a fake behind it.
 */
export interface RegistryCenter extends ConnectionView, RegistryReads, RegistryWrites, RegistryWatches {
  readonly stats: RegistryStats;
}

/**
 * Resolves once the session is connected, waiting at most `timeoutMs`; rejects with a RegistryError
 * (`CONNECTION_LOSS`) after that, since a request sent meanwhile would wait for ZooKeeper without bound.
 */
export async function awaitConnection(connection: ConnectionView, timeoutMs: number, what: string): Promise<void> {
  if (connection.isConnected() || (await connection.waitForConnection(timeoutMs))) return;
  throw new RegistryError(
    'CONNECTION_LOSS',
    undefined,
    `${what}: not connected to ZooKeeper after waiting ${timeoutMs} ms; check that it runs and is reachable`,
  );
}
