import type { Logger } from '@nestjs/common';
import { CoordinationTimeoutError, RegistryError } from '../../errors/elastic-job.errors.js';
import { LeaderLatch } from '../../registry/leader-latch.js';
import type { NodeMode, TransactionOp } from '../../registry/registry.types.js';
import { TreeCache } from '../../registry/tree-cache.js';
import { mapBounded } from '../../registry/request-limits.js';
import { registryErrorCode } from '../../errors/elastic-job.errors.js';
import type { RegistryCenter } from '../../registry/registry-center.js';
import type { JobNodePath } from '../paths.js';
import { CachedReads, DirectReads } from './job-node-reads.js';

const utf8 = (value: string): Buffer => Buffer.from(value, 'utf8');

/**
 * The storage facade of one job (ElasticJob's JobNodeStorage). The coordination services reach ZooKeeper only
 * through here, and every read names its door at the call site:
 * - `storage.cached.*`: the job's TreeCache (no request; what the steady state runs on);
 * - `storage.direct.*`: a request to ZooKeeper now (where the cache may lag: another session's view, a check
 *   that must see the server's latest state).
 * Writes go to ZooKeeper; our own creates reach the cache without a read back.
 */
export class JobNodeStorage {
  private readonly cache: TreeCache;
  readonly cached: CachedReads;
  readonly direct: DirectReads;

  constructor(
    private readonly registry: RegistryCenter,
    readonly paths: JobNodePath,
    private readonly logger: Logger,
  ) {
    this.cache = new TreeCache(registry, paths.root, logger, (path) => paths.cacheShape(path));
    this.cached = new CachedReads(this.cache);
    this.direct = new DirectReads(registry);
  }

  /** Starts the cache (persistent watch, then a full read) and resolves when it reflects ZooKeeper. */
  startCache(): Promise<void> {
    return this.cache.start();
  }

  closeCache(): void {
    this.cache.close();
  }

  /** The node's full ZooKeeper path (namespace included), for logs an operator can act on. */
  fullPath(path: string): string {
    return `/${this.registry.namespace}${path}`;
  }

  /**
   * The skeleton directories the cache does not show. The cache leaves the latch directories out: they count as
   * present with their parent (we create them together).
   */
  missingSkeleton(): string[] {
    return this.paths.skeleton().filter((path) => {
      const shape = this.paths.cacheShape(path);
      return !this.cache.has(shape === 'ignore' ? path.slice(0, path.lastIndexOf('/')) : path);
    });
  }

  /**
   * Creates the job's missing directories in one transaction, reading ZooKeeper directly (a peer creating some
   * meanwhile: one by one). The fallback of a set-up planned from the cache.
   */
  async ensureSkeleton(): Promise<void> {
    const skeleton = this.paths.skeleton();
    const present = new Set(
      ((await this.registry.getChildren(this.paths.root)) ?? []).map((name) => `${this.paths.root}/${name}`),
    );
    const rootExists = present.size > 0 || (await this.registry.exists(this.paths.root)) !== undefined;
    if (rootExists) present.add(this.paths.root);
    // Deeper directories exist when their top-level parent does (we create them together).
    const missing = skeleton.filter(
      (path) => !present.has(path) && !present.has(path.split('/').slice(0, 3).join('/')),
    );
    if (missing.length === 0) return;
    try {
      await this.registry.transaction(
        missing.map((path) => ({ op: 'create', path, data: Buffer.alloc(0), mode: 'PERSISTENT' })),
      );
    } catch (error) {
      if (registryErrorCode(error) !== 'NODE_EXISTS' && registryErrorCode(error) !== 'NO_NODE') throw error;
      for (const path of skeleton) await this.registry.ensurePath(path);
    }
  }

  // ------------------------------------------------------------ writes

  // The writes, named by intent: replace, createOrKeep, createEphemeral, remove (one node, several, or those the
  // cache shows), removeTree and transaction (with the op builders below).

  /**
   * The node holds `value` afterwards: created (with parents) or overwritten. `fromCache`: planned from the cache
   * (nothing when it already shows this value, a create written through when it shows no node, an overwrite
   * otherwise), ZooKeeper disagreeing falls back to the direct way.
   */
  async replace(path: string, value: string, options: { fromCache?: boolean } = {}): Promise<void> {
    if (options.fromCache) {
      const cached = this.cache.get(path);
      if (cached === value) return;
      try {
        if (cached === undefined)
          await this.writeThrough(
            [{ path, data: utf8(value) }],
            this.createWithParents(path, utf8(value), 'PERSISTENT'),
          );
        else await this.registry.setData(path, utf8(value));
        return;
      } catch (error) {
        const code = registryErrorCode(error);
        if (code !== 'NODE_EXISTS' && code !== 'NO_NODE') throw error;
      }
    }
    try {
      await this.registry.setData(path, utf8(value));
    } catch (error) {
      if (registryErrorCode(error) !== 'NO_NODE') throw error;
      await this.refuseIfRemoved(path);
      await this.registry.persist(path, utf8(value));
    }
  }

  /** Creates a persistent node (with parents) if it is missing; leaves an existing one as it is. */
  async createOrKeep(path: string, value = ''): Promise<void> {
    try {
      await this.writeThrough([{ path, data: utf8(value) }], this.createWithParents(path, utf8(value), 'PERSISTENT'));
    } catch (error) {
      if (registryErrorCode(error) !== 'NODE_EXISTS') throw error;
    }
  }

  /**
   * Creates an ephemeral node of our session; false when one is there already. By default an existing node is
   * left to its owner (an election: the first wins). `replaceOthers`: the node is ours to hold (our instance node):
   * one of our own session is kept (set to `value`), so a create retried after a connection loss is harmless, and
   * one of another session (a previous life's, not yet expired) is replaced.
   */
  /**
   * An ephemeral node the cache does not hold (a reply for someone else to read), created only while `whileExists`
   * is there (one transaction): a NO_NODE error says it is gone, and nothing was created.
   */
  async createUncachedEphemeral(path: string, data: Buffer, whileExists: string): Promise<void> {
    await this.registry.transaction([
      { op: 'check', path: whileExists },
      { op: 'create', path, data, mode: 'EPHEMERAL' },
    ]);
  }

  async createEphemeral(path: string, value: string, options: { replaceOthers?: boolean } = {}): Promise<boolean> {
    try {
      await this.writeThrough([{ path, data: utf8(value) }], this.createWithParents(path, utf8(value), 'EPHEMERAL'));
      return true;
    } catch (error) {
      if (registryErrorCode(error) !== 'NODE_EXISTS') throw error;
      if (!options.replaceOthers) return false;
      const existing = await this.registry.getData(path);
      if (existing && existing.stat.ephemeralOwner === this.registry.getSessionId()) {
        if (existing.data.toString('utf8') !== value) await this.registry.setData(path, utf8(value));
        return false;
      }
      await this.registry.remove(path);
      await this.createWithParents(path, utf8(value), 'EPHEMERAL');
      return true;
    }
  }

  /**
   * Removes the node, or each of several (a bounded number of requests at a time); missing ones are fine.
   * `onlyCached`: only those the cache holds (the others are not there to remove).
   */
  async remove(paths: string | readonly string[], options: { onlyCached?: boolean } = {}): Promise<void> {
    if (typeof paths === 'string') return this.registry.remove(paths);
    const existing = options.onlyCached ? paths.filter((path) => this.cache.has(path)) : paths;
    await mapBounded(existing, (path) => this.registry.remove(path));
  }

  /** Removes the node and everything below it. */
  async removeTree(path: string): Promise<void> {
    await this.registry.removeRecursive(path);
  }

  /**
   * A multi-op, with `check(/{job})` first as ElasticJob does (`rootCheck: false` while setting the job up, when the
   * root may be missing). One request, atomic; `batches`: in as many requests as ZooKeeper's request limit needs,
   * each with the root check, atomic within a request only (callers must be able to pick up after a partial write).
   * `coalesce`: sent with the other jobs' transactions of this tick when it is one request (see write()).
   */
  transaction(
    ops: readonly TransactionOp[],
    options: { batches?: boolean; rootCheck?: boolean; coalesce?: boolean } = {},
  ): Promise<void> {
    if (ops.length === 0) return Promise.resolve();
    // One request (the running markers of every firing): the write's promise itself, no async frame of our own (each
    // such frame and its await were ~500 bytes of a burst's item start, docs/benchmarks.md, issue 43).
    if (!options.batches) {
      const sent = options.rootCheck === false ? ops : [this.rootCheck(), ...ops];
      return this.write(sent, options.coalesce === true);
    }
    return this.transactionInBatches(ops, options);
  }

  private async transactionInBatches(
    ops: readonly TransactionOp[],
    options: { rootCheck?: boolean; coalesce?: boolean },
  ): Promise<void> {
    const leading = options.rootCheck === false ? [] : [this.rootCheck()];
    const batches = this.registry.multiBatches(ops, leading);
    // One request's worth may share a request with other jobs' (the coalescer sends a large one alone anyway).
    if (batches.length === 1) return this.write(batches[0]!, options.coalesce === true);
    for (const batch of batches) await this.write(batch);
  }

  /**
   * The ops cut, in order, into as many transaction() calls as ZooKeeper's request limit needs (room left in each
   * for the check of the root that transaction() adds).
   */
  multiBatches(ops: readonly TransactionOp[]): TransactionOp[][] {
    const batches = this.registry.multiBatches(ops, [this.rootCheck()]);
    // One request holds them all (nearly always): the ops as they are.
    if (batches.length === 1) return [ops as TransactionOp[]];
    return batches.map((batch) => batch.slice(1));
  }

  private rootCheck(): TransactionOp {
    return { op: 'check', path: this.paths.root };
  }

  /** Creates the node, and its parents when missing, unless the job was removed meanwhile (see refuseIfRemoved). */
  private async createWithParents(path: string, data: Buffer, mode: NodeMode): Promise<string> {
    try {
      return await this.registry.create(path, data, mode);
    } catch (error) {
      if (registryErrorCode(error) !== 'NO_NODE') throw error;
      await this.refuseIfRemoved(path);
      return this.registry.createWithParents(path, data, mode);
    }
  }

  /**
   * A missing parent is made again only while the job's config node exists: ElasticJob's removeJobConfiguration
   * (and ours) deletes the job's whole tree, and a reaction racing it (a resharding flag, a failover item, an
   * election) must not put pieces of a removed job back. Costs a read only when a parent is missing.
   */
  private async refuseIfRemoved(path: string): Promise<void> {
    if (path === this.paths.root || path === this.paths.config) return; // the job's own set-up
    if ((await this.registry.exists(this.paths.config)) !== undefined) return;
    throw new RegistryError(
      'NO_NODE',
      path,
      `${this.fullPath(path)} not written: the job's config node is gone (the job was removed from ZooKeeper)`,
    );
  }

  /** Our own creates reach the cache without a read (see TreeCache.expectOwnCreates). */
  private writeThrough<T>(creates: Array<{ path: string; data: Buffer }>, write: Promise<T>): Promise<T> {
    if (creates.length > 0) this.cache.expectOwnCreates(creates, write);
    return write;
  }

  /**
   * `coalesce`: sent with the other jobs' writes of this tick (ZookeeperRegistryCenter.coalescedTransaction). Not an
   * async function (see transaction()); a synchronous failure is a rejection all the same.
   */
  private write(ops: readonly TransactionOp[], coalesce = false): Promise<void> {
    if (ops.length === 0) return Promise.resolve();
    try {
      // The create ops themselves (each has its path and data): no object made per op, no array without a create.
      let creates: Array<{ path: string; data: Buffer }> | undefined;
      for (const op of ops) if (op.op === 'create') (creates ??= []).push(op);
      const sent = coalesce ? this.registry.coalescedTransaction(ops) : this.registry.transaction(ops);
      return creates === undefined ? sent : this.writeThrough(creates, sent);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  setDataOp(path: string, value: string): TransactionOp {
    return { op: 'setData', path, data: utf8(value) };
  }

  createOp(path: string, value: string, mode: NodeMode = 'PERSISTENT'): TransactionOp {
    return { op: 'create', path, data: utf8(value), mode };
  }

  /**
   * ElasticJob's executeInLeader: run `callback` while holding a Curator-compatible latch at `latchPath`,
   * bounded by `timeoutMs` (ElasticJob waits forever, docs/reference/elasticjob.md §8). Returns false when the latch
   * was not acquired.
   */
  executeInLeader(latchPath: string, timeoutMs: number, callback: () => Promise<void>): Promise<boolean> {
    return this.holdingLatch(latchPath, timeoutMs, () => callback());
  }

  /**
   * ElasticJob's leader election callback inside the latch at `latchPath`: create the ephemeral `path` unless
   * someone holds it. The create and the release of our latch node are one transaction (a new job's election is a
   * write fewer); when it fails (the node exists, a parent is missing), the plain create, then the release.
   * Undefined when the latch was not acquired in time, else whether we created the node.
   */
  async createEphemeralInLatch(
    latchPath: string,
    timeoutMs: number,
    path: string,
    value: string,
  ): Promise<boolean | undefined> {
    let created = false;
    const acquired = await this.holdingLatch(latchPath, timeoutMs, async (latch) => {
      const release = latch.closeWith([this.createOp(path, value, 'EPHEMERAL')]);
      try {
        await this.writeThrough([{ path, data: utf8(value) }], release);
        created = true;
      } catch (error) {
        // Someone holds the node: the plain create would fail the same way. Anything else: the plain way.
        if (registryErrorCode(error) !== 'NODE_EXISTS') created = await this.createEphemeral(path, value);
      }
    });
    return acquired ? created : undefined;
  }

  private async holdingLatch(
    latchPath: string,
    timeoutMs: number,
    callback: (latch: LeaderLatch) => Promise<void>,
  ): Promise<boolean> {
    const latch = new LeaderLatch(this.registry, latchPath, '', `ElasticJob:${this.paths.jobName}`);
    // The latch creates its node first and its container only when told NO_NODE, as Curator does: where the cache
    // follows the latch directory and shows it missing (a new job's election), the failed create is saved.
    // Only while connected: disconnected, this request would wait outside the latch's time limit.
    if (this.registry.isConnected() && this.paths.cacheShape(latchPath) !== 'ignore' && !this.cache.has(latchPath))
      await this.registry.createContainer(latchPath).catch(() => undefined);
    try {
      await latch.start(Date.now() + timeoutMs);
      if (!(await latch.await(timeoutMs))) {
        this.logger.warn(
          `${new CoordinationTimeoutError(this.paths.jobName, `the latch ${latchPath}`, timeoutMs).message}; will ` +
            `try again`,
        );
        return false;
      }
      await callback(latch);
      return true;
    } finally {
      await latch.close();
    }
  }
}
