import type { Socket } from 'node:net';
import zookeeper from 'node-zookeeper-client';
import type { ACL, Client, Event as ZkEvent, Stat } from 'node-zookeeper-client';
import clientException from 'node-zookeeper-client/lib/Exception.js';
import juteModule from 'node-zookeeper-client/lib/jute/index.js';
import { AddWatchRequest } from './add-watch-request.js';
import type { ConnectionManagerInternals, Jute, RawNotification } from './client-internals.js';
import { streamlineIo, tapNotifications } from './client-patches.js';
import type { ReplyClock } from './reply-clock.js';
import type { ZxidWatermark } from './zxid-watermark.js';
import { installLeanMultiAnswers } from './multi-answer.js';
import { multiAcl, MultiRequest, type MultiOp } from './multi-request.js';
import { MULTI_READ, MultiReadRequest, type MultiReadResult } from './multi-read.js';
import type { NodeData, NodeMode, NodeStat, ReadRequest, WatchEventType } from './registry.types.js';

export type { RawNotification };

/**
 * The one file that imports node-zookeeper-client. Everything the library takes from the client, public API and
 * internals alike, goes through here: requests, connection events, the session's id and timeout, and the reaches
 * into its internals (jute request classes, the connection manager's queue, its watcher manager, its socket
 * handlers and socket writes, the MULTI answer). The client is unmaintained and its version pinned in
 * package.json (docs/reference/zookeeper.md §3), so these do not move under us; still, every shape relied on is
 * checked before connecting (`assertClientShape`), and the socket on every connection (`socket()`), so that no
 * reach can silently stop working.
 *
 * Paths here are full paths (namespace included); results use the library's types (registry.types.ts).
 */

const jute = juteModule as Jute;
/** The client's own error factory, so errors from our requests look like errors from its own. */
const createClientException = (clientException as { create(code: number): Error }).create;

const MODES: Record<NodeMode, number> = {
  PERSISTENT: zookeeper.CreateMode.PERSISTENT,
  EPHEMERAL: zookeeper.CreateMode.EPHEMERAL,
  PERSISTENT_SEQUENTIAL: zookeeper.CreateMode.PERSISTENT_SEQUENTIAL,
  EPHEMERAL_SEQUENTIAL: zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL,
};

/** Watch event types by the client's numbers (also the wire's). 5 to 7 (watch removed) are not ours. */
const EVENT_TYPES: Record<number, WatchEventType> = {
  [zookeeper.Event.NODE_CREATED]: 'NODE_CREATED',
  [zookeeper.Event.NODE_DELETED]: 'NODE_DELETED',
  [zookeeper.Event.NODE_DATA_CHANGED]: 'NODE_DATA_CHANGED',
  [zookeeper.Event.NODE_CHILDREN_CHANGED]: 'NODE_CHILDREN_CHANGED',
};

/** ZooKeeper's `addWatch` opcode (3.6+) and its PERSISTENT_RECURSIVE mode (docs/reference/zookeeper.md §2.4). */
const ADD_WATCH = 106;
const PERSISTENT_RECURSIVE = 1;
/** ZooKeeper's `createContainer` opcode (3.5.3+) and CreateMode.CONTAINER's flag (docs/reference/zookeeper.md). */
const CREATE_CONTAINER = 19;
const CONTAINER_FLAG = 4;

/** The ACL put on every node we create: the client's objects for its own requests, and the bytes for ours. */
export interface NodeAcl {
  readonly client: ACL[];
  readonly bytes: Buffer;
}

/** Digest users: only authenticated sessions may touch the nodes (ZooKeeper's 'auth' scheme); else open. */
export function nodeAcl(digest: string | undefined): NodeAcl {
  const acl = {
    permission: zookeeper.Permission.ALL,
    ...(digest ? { scheme: 'auth', id: '' } : { scheme: 'world', id: 'anyone' }),
  };
  return { client: [new zookeeper.ACL(acl.permission, new zookeeper.Id(acl.scheme, acl.id))], bytes: multiAcl([acl]) };
}

export type ClientCallback<T> = (error: unknown, result?: T) => void;

/** The error name of a failure the client reported ('NO_NODE', 'CONNECTION_LOSS', ...), or undefined. */
export function clientErrorName(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const candidate = error as { code?: unknown; name?: unknown };
  return typeof candidate.code === 'number' && typeof candidate.name === 'string' ? candidate.name : undefined;
}

/** The error name of a ZooKeeper error code (-102 is 'NO_AUTH'), as the client names it. */
export function errorNameOfCode(code: number): string {
  return clientErrorName(createClientException(code)) ?? `ERROR_${code}`;
}

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

function internals(client: Client): ConnectionManagerInternals {
  return (client as unknown as { connectionManager: ConnectionManagerInternals }).connectionManager;
}

/**
 * Every shape this library relies on, checked on a new client before it connects: what is missing is named,
 * instead of a reach that silently stops working (the liveness watchdog, pings, persistent watches, multi
 * requests and the I/O streamlining all depend on them). Throws an Error naming what is missing.
 */
export function assertClientShape(client: Client): void {
  const manager = (client as unknown as { connectionManager?: Partial<ConnectionManagerInternals> }).connectionManager;
  const missing = [
    ['connectionManager', manager !== undefined],
    ['connectionManager.queue()', typeof manager?.queue === 'function'],
    ['connectionManager.watcherManager.emit()', typeof manager?.watcherManager?.emit === 'function'],
    [
      'connectionManager.watcherManager: register{Data,Child,Existence}Watcher() and their {data,child,existence}Watchers',
      (['Data', 'Child', 'Existence'] as const).every(
        (kind) =>
          typeof manager?.watcherManager?.[`register${kind}Watcher`] === 'function' &&
          typeof manager.watcherManager[`${kind.toLowerCase() as Lowercase<typeof kind>}Watchers`] === 'object',
      ),
    ],
    ['connectionManager.onSocketData()', typeof manager?.onSocketData === 'function'],
    ['connectionManager.onSocketConnected()', typeof manager?.onSocketConnected === 'function'],
    ['connectionManager.pendingQueue (an array)', Array.isArray(manager?.pendingQueue)],
    [
      'jute.OP_CODES (SET_WATCHES, MULTI, ERROR, PING, CREATE)',
      [
        jute.OP_CODES?.SET_WATCHES,
        jute.OP_CODES?.MULTI,
        jute.OP_CODES?.ERROR,
        jute.OP_CODES?.PING,
        jute.OP_CODES?.CREATE,
      ].every((code) => typeof code === 'number'),
    ],
    ['jute.XID_PING', typeof jute.XID_PING === 'number'],
    [
      'jute.OP_CODES (DELETE, CHECK, SET_DATA), jute.TransactionResponse, jute.protocol.SetDataResponse',
      [jute.OP_CODES?.DELETE, jute.OP_CODES?.CHECK, jute.OP_CODES?.SET_DATA].every(
        (code) => typeof code === 'number',
      ) &&
        typeof jute.TransactionResponse?.prototype?.deserialize === 'function' &&
        typeof jute.protocol?.SetDataResponse === 'function',
    ],
    ['jute.protocol.RequestHeader', typeof jute.protocol?.RequestHeader === 'function'],
    ['jute.protocol.CreateRequest', typeof jute.protocol?.CreateRequest === 'function'],
    ['jute.Request', typeof jute.Request === 'function'],
    ['Exception.create()', typeof createClientException === 'function'],
  ].flatMap(([name, present]) => (present ? [] : [name as string]));
  if (missing.length > 0) {
    throw new Error(
      `node-zookeeper-client lacks what this library relies on: ${missing.join(', ')}. Install the version pinned ` +
        `in nestjs-elastic-job's package.json`,
    );
  }
}

export interface ZookeeperClientOptions {
  serverLists: string;
  sessionTimeoutMs: number;
  /** Delay between connection attempts to the servers of the list. */
  spinDelayMs: number;
  digest?: string;
  acl: NodeAcl;
  /** Raised by every frame read (zxid-watermark.ts). */
  watermark?: ZxidWatermark;
  /** Told of every answer read (reply-clock.ts). */
  replies?: ReplyClock;
}

export interface ZookeeperClientEvents {
  connected(): void;
  disconnected(): void;
  expired(): void;
  authenticationFailed(): void;
}

/**
 * One node-zookeeper-client `Client` (one connection attempt sequence, at most one session), with the library's
 * changes to it installed before it connects: shapes checked, socket I/O streamlined, notifications tapped (for
 * persistent watches), no client-side retries.
 */
export class ZookeeperClientAdapter {
  private readonly client: Client;
  private readonly manager: ConnectionManagerInternals;
  private readonly acl: NodeAcl;
  private readonly watcherWrappers = new WeakMap<(event: RawNotification) => void, (event: ZkEvent) => void>();

  /** Throws (naming what is missing) when the installed client lacks a shape this library relies on. */
  constructor(options: ZookeeperClientOptions, onNotification: (notification: RawNotification) => void) {
    this.acl = options.acl;
    this.client = zookeeper.createClient(options.serverLists, {
      sessionTimeout: options.sessionTimeoutMs,
      spinDelay: options.spinDelayMs,
      retries: 0,
    });
    try {
      assertClientShape(this.client);
    } catch (error) {
      this.client.close();
      throw error;
    }
    this.manager = internals(this.client);
    installLeanMultiAnswers(jute);
    streamlineIo(this.manager, options.watermark, options.replies);
    tapNotifications(this.manager, EVENT_TYPES, onNotification);
    if (options.digest) this.client.addAuthInfo('digest', Buffer.from(options.digest, 'utf8'));
  }

  on<E extends keyof ZookeeperClientEvents>(event: E, listener: ZookeeperClientEvents[E]): void {
    this.client.on(event, listener);
  }

  connect(): void {
    this.client.connect();
  }

  /** Closes the connection (ending the session); resolves when the client says so, or after 2 s. */
  close(): Promise<void> {
    const closed = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 2_000);
      this.client.once('disconnected', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    this.client.close();
    return closed;
  }

  /** 16 hex digits, as `NodeStat.ephemeralOwner`. */
  sessionId(): string {
    return this.client.getSessionId().toString('hex');
  }

  /** The negotiated session timeout once connected. */
  sessionTimeoutMs(): number {
    return this.client.getSessionTimeout();
  }

  credentials(): { sessionId: Buffer; sessionPassword: Buffer } {
    return { sessionId: this.client.getSessionId(), sessionPassword: this.client.getSessionPassword() };
  }

  /** The socket of the connection, checked: the watchdog reads and destroys it, so it must be a real one. */
  socket(): Socket {
    const socket = this.manager.socket;
    if (
      !socket ||
      typeof socket.destroy !== 'function' ||
      typeof socket.on !== 'function' ||
      typeof socket.bytesWritten !== 'number'
    ) {
      throw new Error(
        'node-zookeeper-client reported a connection without a socket this library can watch: install the version ' +
          'pinned in its package.json',
      );
    }
    return socket;
  }

  /**
   * Queues a ping, as the client's own idle timer does (`ConnectionManager.onSocketTimeout`): header only, no
   * answer callback (the client skips ping answers).
   */
  ping(): void {
    this.manager.queue(
      new jute.Request(new jute.protocol.RequestHeader(jute.XID_PING, jute.OP_CODES.PING), null),
      () => undefined,
    );
  }

  // ---------------------------------------------------------------- requests (full paths)

  getData(
    path: string,
    watcher: ((event: RawNotification) => void) | undefined,
    callback: ClientCallback<NodeData>,
  ): void {
    const done = (error: unknown, data?: Buffer, stat?: Stat): void =>
      callback(error, error ? undefined : { data: data ?? Buffer.alloc(0), stat: toStat(stat as Stat) });
    if (watcher) this.client.getData(path, this.wrap(watcher), done);
    else this.client.getData(path, done);
  }

  getChildren(
    path: string,
    watcher: ((event: RawNotification) => void) | undefined,
    callback: ClientCallback<string[]>,
  ): void {
    if (watcher) this.client.getChildren(path, this.wrap(watcher), (error, children) => callback(error, children));
    else this.client.getChildren(path, (error, children) => callback(error, children));
  }

  /** The stat, or undefined when the node does not exist. */
  exists(
    path: string,
    watcher: ((event: RawNotification) => void) | undefined,
    callback: ClientCallback<NodeStat | undefined>,
  ): void {
    const done = (error: unknown, stat?: Stat | null): void => callback(error, stat ? toStat(stat) : undefined);
    if (watcher) this.client.exists(path, this.wrap(watcher), done);
    else this.client.exists(path, done);
  }

  /** Calls back with the created path (a sequential create's name included). */
  create(path: string, data: Buffer, mode: NodeMode, callback: ClientCallback<string>): void {
    this.client.create(path, data, this.acl.client, MODES[mode], callback);
  }

  /**
   * A container node (ZooKeeper 3.5.3+; the server deletes it once its last child is gone), as Curator's
   * `creatingParentContainersIfNeeded` makes latch directories. The client has no API for it: the request is the
   * client's own CreateRequest sent with the `createContainer` opcode; once serialized its header says CREATE, so
   * the answer (Create2Response: the path, then a stat the frame reader drops) is read as a plain create's.
   */
  createContainer(path: string, callback: ClientCallback<void>): void {
    const header = new jute.protocol.RequestHeader();
    header.type = CREATE_CONTAINER;
    const body = new jute.protocol.CreateRequest();
    body.path = path;
    body.data = Buffer.alloc(0);
    // The client's ACL objects turn themselves into jute records as its own create does (not in its typings).
    body.acl = this.acl.client.map((acl) => (acl as unknown as { toRecord(): unknown }).toRecord());
    body.flags = CONTAINER_FLAG;
    const request = new jute.Request(header, body);
    const serialize = request.toBuffer.bind(request);
    request.toBuffer = () => {
      header.type = CREATE_CONTAINER;
      const bytes = serialize();
      header.type = jute.OP_CODES.CREATE; // read back by the client when the answer arrives
      return bytes;
    };
    this.manager.queue(request, (error) => callback(error));
  }

  mkdirp(path: string, callback: ClientCallback<string>): void {
    this.client.mkdirp(path, this.acl.client, callback);
  }

  setData(path: string, data: Buffer, version: number, callback: ClientCallback<NodeStat>): void {
    this.client.setData(path, data, version, (error, stat) => callback(error, stat ? toStat(stat) : undefined));
  }

  remove(path: string, version: number, callback: ClientCallback<void>): void {
    this.client.remove(path, version, (error) => callback(error));
  }

  /**
   * Sends the ops as one `multi` written by multi-request.ts (the client's own Transaction is slow and turns
   * version 0 into -1, its bug #67); the answer is read by the client's MultiResponse reader. The callback gets
   * the error of the op that failed it (as the client's Transaction.commit reports it), a connection error, or
   * null.
   */
  multi(
    ops: ReadonlyArray<
      { op: 'create'; path: string; data: Buffer; mode: NodeMode } | Exclude<MultiOp, { op: 'create' }>
    >,
    callback: ClientCallback<void>,
  ): void {
    const multiOps: MultiOp[] = ops.map((op) =>
      op.op === 'create' ? { op: 'create', path: op.path, data: op.data, flags: MODES[op.mode] } : op,
    );
    const header = new jute.protocol.RequestHeader();
    header.type = jute.OP_CODES.MULTI;
    const request = new jute.Request(header, new MultiRequest(multiOps, this.acl.bytes));
    this.manager.queue(request, (error, response) => {
      if (error) return callback(error);
      const results =
        (response as { payload?: { results?: Array<{ type: number; err?: number }> } } | undefined)?.payload?.results ??
        [];
      const failed = results.find((result) => result.type === jute.OP_CODES.ERROR && result.err !== 0);
      callback(failed ? createClientException(failed.err!) : null);
    });
  }

  /**
   * A `multiRead` (ZooKeeper 3.6+, multi-read.ts), which the client has no API for: sent with its opcode, then read
   * back as a MULTI, whose reader (multi-answer.ts) reads the reads' answers too. `opCode` is for tests only (an
   * opcode the server lacks, to see the fallback).
   */
  multiRead(reads: readonly ReadRequest[], callback: ClientCallback<MultiReadResult[]>, opCode = MULTI_READ): void {
    const header = new jute.protocol.RequestHeader();
    header.type = opCode;
    const request = new jute.Request(header, new MultiReadRequest(reads));
    const serialize = request.toBuffer.bind(request);
    request.toBuffer = () => {
      header.type = opCode;
      const bytes = serialize();
      header.type = jute.OP_CODES.MULTI; // read back by the client when the answer arrives
      return bytes;
    };
    this.manager.queue(request, (error, response) => {
      if (error) return callback(error);
      callback(null, (response as { payload?: { results?: MultiReadResult[] } } | undefined)?.payload?.results ?? []);
    });
  }

  /**
   * `addWatch(path, PERSISTENT_RECURSIVE)` (ZooKeeper 3.6+), which the client has no API for. The request goes
   * through the connection manager's queue like any other; once serialized its header says SET_WATCHES, the only
   * body-less answer the client knows, so the server's `ErrorResponse(0)` is accepted instead of making the
   * client drop the connection. Notifications arrive through the tap installed by the constructor.
   */
  addPersistentRecursiveWatch(path: string, callback: ClientCallback<void>): void {
    const header = new jute.protocol.RequestHeader();
    header.type = ADD_WATCH;
    const request = new jute.Request(header, new AddWatchRequest(path, PERSISTENT_RECURSIVE));
    const serialize = request.toBuffer.bind(request);
    request.toBuffer = () => {
      header.type = ADD_WATCH;
      const bytes = serialize();
      header.type = jute.OP_CODES.SET_WATCHES; // read back by the client when the (body-less) answer arrives
      return bytes;
    };
    this.manager.queue(request, (error) => callback(error));
  }

  // ---------------------------------------------------------------- changes installed before connect()

  /** One client watcher function per library watcher: the client de-duplicates watchers by identity. */
  private wrap(watcher: (event: RawNotification) => void): (event: ZkEvent) => void {
    let wrapped = this.watcherWrappers.get(watcher);
    if (!wrapped) {
      wrapped = (event: ZkEvent) => {
        const type = EVENT_TYPES[event.getType()];
        if (type) watcher({ type, path: event.getPath() });
      };
      this.watcherWrappers.set(watcher, wrapped);
    }
    return wrapped;
  }
}
