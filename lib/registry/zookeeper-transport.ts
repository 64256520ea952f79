import { Logger } from '@nestjs/common';
import { RegistryError, registryErrorCode } from '../errors/elastic-job.errors.js';
import type { NamespacePaths } from './namespace-paths.js';
import type { RegistryStats } from './registry-center.js';
import { answersOf, MULTI_READ, type MultiReadResult } from './multi-read.js';
import type {
  NodeData,
  NodeMode,
  NodeStat,
  ReadAnswer,
  ReadRequest,
  TransactionOp,
  Watcher,
} from './registry.types.js';
import { assertMultiRequestFits, assertNodeDataFits, multiBatches, multiRequestBytes } from './request-limits.js';
import {
  clientErrorName,
  errorNameOfCode,
  type ClientCallback,
  type NodeAcl,
  type RawNotification,
  type ZookeeperClientAdapter,
} from './zookeeper-client.adapter.js';
import type { ZookeeperSession } from './zookeeper-session.js';

/**
 * ZooKeeper's single requests as promises, over the session's current client: namespace-relative paths, typed
 * errors (`RegistryError` with the ZooKeeper error name), every request counted, no client-side retries. A
 * request still pending when the session is lost or closed fails then (the session tracks it).
 */
export class ZookeeperTransport {
  private readonly logger = new Logger('ElasticJob:ZooKeeper');
  private readonly watcherWrappers = new WeakMap<Watcher, (event: RawNotification) => void>();
  readonly stats: RegistryStats = { reads: 0, writes: 0, watchRequests: 0, watchEvents: 0 };

  constructor(
    private readonly session: ZookeeperSession,
    private readonly paths: NamespacePaths,
    private readonly acl: NodeAcl,
    /** Bytes every path gains on the wire: `/{namespace}` and the connection string's chroot. */
    private readonly pathPrefixBytes: number,
  ) {}

  /** The node's data and stat, or undefined when it does not exist. */
  async getData(path: string, watcher?: Watcher): Promise<NodeData | undefined> {
    try {
      return await this.send<NodeData>(
        (c, cb) => c.getData(this.paths.full(path), watcher && this.wrap(watcher), cb),
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
      return await this.send<string[]>(
        (c, cb) => c.getChildren(this.paths.full(path), watcher && this.wrap(watcher), cb),
        path,
        'reads',
      );
    } catch (error) {
      if (registryErrorCode(error) === 'NO_NODE') return undefined;
      throw error;
    }
  }

  /**
   * Reads in one `multiRead` request (multi-read.ts), in the order asked; undefined for a missing node. A server
   * without multiRead (before 3.6) answers UNIMPLEMENTED: that is remembered, said once, and the reads go one
   * request each from then on (the first such answer also closes the connection: those reads fail as connection
   * trouble, and their callers retry after the reconnection as for any lost request).
   */
  async readMany(reads: readonly ReadRequest[]): Promise<ReadAnswer[]> {
    if (reads.length === 0) return [];
    if (!this.multiReadUnsupported) {
      const full = reads.map((read) => ({ path: this.paths.full(read.path), what: read.what }));
      const described =
        reads
          .slice(0, 3)
          .map((read) => read.path)
          .join(', ') + (reads.length > 3 ? ` and ${reads.length - 3} more` : '');
      try {
        const results = await this.send<MultiReadResult[]>(
          (c, cb) => c.multiRead(full, cb, this.multiReadOpCode),
          described,
          'reads',
        );
        return answersOf(reads, results, (read, code) => {
          const name = errorNameOfCode(code);
          throw new RegistryError(name, read.path, `ZooKeeper ${name} on ${read.path} (${read.what}, in a multiRead)`);
        });
      } catch (error) {
        if (registryErrorCode(error) !== 'UNIMPLEMENTED') throw error;
        this.multiReadUnsupported = true;
        this.logger.warn(
          'this ZooKeeper server does not know multiRead (ZooKeeper 3.6+): reading one node a request instead; ' +
            'ZooKeeper 3.6 or later is required for persistent watches as well',
        );
      }
    }
    return Promise.all(
      reads.map((read) => (read.what === 'data' ? this.getData(read.path) : this.getChildren(read.path))),
    );
  }

  /** Set once a server answered multiRead with UNIMPLEMENTED (see readMany). */
  private multiReadUnsupported = false;
  /** multiRead's opcode; tests set one the server lacks to see the fallback. */
  multiReadOpCode = MULTI_READ;

  /** The node's stat, or undefined. With a watcher: a data watch if it exists, an existence watch otherwise. */
  exists(path: string, watcher?: Watcher): Promise<NodeStat | undefined> {
    return this.send<NodeStat | undefined>(
      (c, cb) => c.exists(this.paths.full(path), watcher && this.wrap(watcher), cb),
      path,
      'reads',
    );
  }

  /** Creates a node; the parents must exist. Returns the created path (namespace-relative). */
  async create(path: string, data: Buffer, mode: NodeMode = 'PERSISTENT'): Promise<string> {
    assertNodeDataFits(path, data);
    return this.paths.relative(
      await this.send<string>((c, cb) => c.create(this.paths.full(path), data, mode, cb), path),
    );
  }

  /** Creates a container node (empty; the parents must exist). NODE_EXISTS is an error here. */
  async createContainer(path: string): Promise<void> {
    await this.send<void>((c, cb) => c.createContainer(this.paths.full(path), cb), path);
  }

  /** Creates the node and any missing parents as PERSISTENT with empty data; existing nodes are left alone. */
  async mkdirs(path: string): Promise<void> {
    await this.send<string>((c, cb) => c.mkdirp(this.paths.full(path), cb), path);
  }

  /** Overwrites the node's data (any version); returns its new stat. */
  setData(path: string, data: Buffer): Promise<NodeStat> {
    assertNodeDataFits(path, data);
    return this.send<NodeStat>((c, cb) => c.setData(this.paths.full(path), data, -1, cb), path);
  }

  /** Deletes the node (any version). NO_NODE and NOT_EMPTY are errors here. */
  async delete(path: string): Promise<void> {
    await this.send<void>((c, cb) => c.remove(this.paths.full(path), -1, cb), path);
  }

  /** All-or-nothing multi-op (ZooKeeper `multi`), versions honoured (written by us, not the client: its bug #67). */
  async transaction(ops: readonly TransactionOp[]): Promise<void> {
    if (ops.length === 0) return;
    assertMultiRequestFits(ops, this.acl.bytes.length, this.pathPrefixBytes);
    const full = ops.map((op) => ({ ...op, path: this.paths.full(op.path) }));
    // Named by its first few paths: a batch of a thousand would make an unreadable log line.
    const described =
      ops
        .slice(0, 3)
        .map((op) => op.path)
        .join(', ') + (ops.length > 3 ? ` and ${ops.length - 3} more` : '');
    await this.send<void>((c, cb) => c.multi(full, cb), described);
  }

  /** Bytes of these ops as one multi request (see request-limits.ts). */
  requestBytes(ops: readonly TransactionOp[]): number {
    return multiRequestBytes(ops, this.acl.bytes.length, this.pathPrefixBytes);
  }

  /** The ops cut, in order, into multi requests that fit ZooKeeper's request limit (see request-limits.ts). */
  multiBatches(ops: readonly TransactionOp[], leading: readonly TransactionOp[] = []): TransactionOp[][] {
    return multiBatches(ops, this.acl.bytes.length, this.pathPrefixBytes, leading);
  }

  /** Asks the server for a persistent recursive watch on `path` for the current connection (see PersistentWatchers). */
  async addPersistentRecursiveWatch(path: string): Promise<void> {
    await this.send<void>((c, cb) => c.addPersistentRecursiveWatch(this.paths.full(path), cb), path, 'watchRequests');
  }

  private send<T>(
    call: (client: ZookeeperClientAdapter, callback: ClientCallback<T>) => void,
    path: string | undefined,
    kind: 'reads' | 'writes' | 'watchRequests' = 'writes',
  ): Promise<T> {
    this.stats[kind]++;
    return new Promise<T>((resolve, reject) => {
      const client = this.session.activeClient;
      if (!client) {
        reject(
          new RegistryError(
            'CLOSED',
            path,
            `ZooKeeper registry center is ${this.session.current === 'CLOSED' ? 'closed' : 'not started'}`,
          ),
        );
        return;
      }
      let settled = false;
      const fail = (error: RegistryError): void => {
        if (settled) return;
        settled = true;
        reject(error);
      };
      const untrack = this.session.trackRequest(fail);
      try {
        call(client, (error, result) => {
          untrack();
          if (settled) return;
          settled = true;
          if (error) {
            const code = clientErrorName(error) ?? 'SYSTEM_ERROR';
            reject(new RegistryError(code, path, `ZooKeeper ${code}${path ? ` on ${path}` : ''}`, { cause: error }));
          } else {
            resolve(result as T);
          }
        });
      } catch (error) {
        untrack();
        fail(
          new RegistryError(
            'BAD_ARGUMENTS',
            path,
            `ZooKeeper call rejected${path ? ` on ${path}` : ''}: ${String(error)}`,
            { cause: error },
          ),
        );
      }
    });
  }

  /** One-shot watchers hear namespace-relative paths; one that throws is logged, never thrown into the client. */
  private wrap(watcher: Watcher): (event: RawNotification) => void {
    let wrapped = this.watcherWrappers.get(watcher);
    if (!wrapped) {
      wrapped = (event: RawNotification) => {
        this.stats.watchEvents++;
        try {
          watcher({ type: event.type, path: this.paths.relative(event.path) });
        } catch (error) {
          this.logger.error(`watcher on ${event.path} failed: ${String(error)}`);
        }
      };
      this.watcherWrappers.set(watcher, wrapped);
    }
    return wrapped;
  }
}
