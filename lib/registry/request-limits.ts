import { RegistryError } from '../errors/elastic-job.errors.js';
import { multiOpSize } from './multi-request.js';
import type { TransactionOp } from './registry.types.js';

/**
 * ZooKeeper refuses a request larger than `jute.maxbuffer` (0xfffff bytes, 1 MiB less one, by default; ZooKeeper
 * Administrator's Guide, "Unsafe Options") by dropping the connection, and node-zookeeper-client then reports a
 * plain connection loss. Nothing we send may come near it (docs/guide/guarantees.md: the item maximum).
 */
const ZOOKEEPER_MAX_REQUEST_BYTES = 0xfffff;
/** The most a node's data (or a multi request) may hold here: the limit less 48 KB for paths, ACLs and headers. */
export const MAX_NODE_DATA_BYTES = ZOOKEEPER_MAX_REQUEST_BYTES - 48 * 1024;
/**
 * A `multi` is cut into requests of at most this many bytes and ops: far below the limit (the server keeps a
 * multi in memory whole, and answers it whole), and about what ZooKeeper's own `ZKUtil.deleteRecursive` batches.
 */
export const MULTI_BATCH_BYTES = 256 * 1024;
export const MULTI_BATCH_OPS = 1000;
/** Requests one fallback or scan keeps in flight at once (instead of one per item, all at once). */
export const MAX_CONCURRENT_REQUESTS = 64;

/** The end header of a multi request (a MultiHeader); the request header and length prefix come on top. */
const MULTI_END_BYTES = 9;

/**
 * Bytes an op takes in a multi request (its MultiHeader, path, data, ACL, version or flags), ACL as given. The path
 * on the wire carries the namespace and any chroot: `pathPrefixBytes` (`/{namespace}` and the chroot, in bytes).
 */
export function multiOpBytes(op: TransactionOp, aclBytes: number, pathPrefixBytes = 0): number {
  return multiOpSize(op, pathPrefixBytes + Buffer.byteLength(op.path, 'utf8'), aclBytes);
}

/** Bytes of a whole multi request body of these ops (see multiOpBytes). */
export function multiRequestBytes(ops: readonly TransactionOp[], aclBytes: number, pathPrefixBytes = 0): number {
  return ops.reduce((size, op) => size + multiOpBytes(op, aclBytes, pathPrefixBytes), MULTI_END_BYTES);
}

/** Data the server would refuse by dropping the connection (jute.maxbuffer) is refused here, with a reason. */
export function assertNodeDataFits(path: string, data: Buffer): void {
  if (data.length > MAX_NODE_DATA_BYTES) {
    throw new RegistryError(
      'REQUEST_TOO_LARGE',
      path,
      `${data.length} bytes for ${path} exceed what a ZooKeeper node may hold here (${MAX_NODE_DATA_BYTES})`,
    );
  }
}

/** A multi request the server would drop the connection on (jute.maxbuffer) is refused here, with a reason. */
export function assertMultiRequestFits(ops: readonly TransactionOp[], aclBytes: number, pathPrefixBytes: number): void {
  const bytes = multiRequestBytes(ops, aclBytes, pathPrefixBytes);
  if (bytes > MAX_NODE_DATA_BYTES) {
    throw new RegistryError(
      'REQUEST_TOO_LARGE',
      ops[0]?.path,
      `a multi request of ${ops.length} ops and ${bytes} bytes exceeds ZooKeeper's request limit; cut it with ` +
        `multiBatches()`,
    );
  }
}

/**
 * Cuts ops, in order, into batches within MULTI_BATCH_BYTES and MULTI_BATCH_OPS (an op larger than that goes alone).
 * `leading` ops (say ElasticJob's check of the job root) start every batch and count towards its limits.
 */
export function multiBatches(
  ops: readonly TransactionOp[],
  aclBytes: number,
  pathPrefixBytes = 0,
  leading: readonly TransactionOp[] = [],
): TransactionOp[][] {
  const leadingBytes = multiRequestBytes(leading, aclBytes, pathPrefixBytes);
  // Most fit one request (a job's markers): sized first, then one batch without growing it op by op.
  if (leading.length + ops.length <= MULTI_BATCH_OPS) {
    let bytes = leadingBytes;
    for (const op of ops) bytes += multiOpBytes(op, aclBytes, pathPrefixBytes);
    if (bytes <= MULTI_BATCH_BYTES) return ops.length === 0 ? [] : [leading.concat(ops)];
  }
  const batches: TransactionOp[][] = [];
  let batch: TransactionOp[] = [...leading];
  let bytes = leadingBytes;
  for (const op of ops) {
    const size = multiOpBytes(op, aclBytes, pathPrefixBytes);
    if (batch.length > leading.length && (bytes + size > MULTI_BATCH_BYTES || batch.length >= MULTI_BATCH_OPS)) {
      batches.push(batch);
      batch = [...leading];
      bytes = leadingBytes;
    }
    batch.push(op);
    bytes += size;
  }
  if (batch.length > leading.length) batches.push(batch);
  return batches;
}

/**
 * Tasks started in one go before the caller yields to the event loop. A task that does not wait (an item handler that
 * returns at once, a cached answer) resolves in microtasks, so thousands of them ran as one macrotask: 5000 items
 * of a firing held the loop for 1.3-1.5 s here (test/integration/request-limits.spec.ts), long enough under load
 * for ZooKeeper's answers to sit unread past the liveness watchdog's limit and for our pings not to go out. After
 * this many starts the loop turns (setImmediate: pending I/O first), so the socket is read and written between.
 */
export const STARTS_PER_TURN = 256;

/**
 * Runs `task` for every item with at most `limit` running at once; resolves with the results in order, or rejects with
 * the first failure. Yields to the event loop after every STARTS_PER_TURN starts.
 */
export function mapBounded<T, R>(
  items: readonly T[],
  task: (item: T) => Promise<R>,
  limit = MAX_CONCURRENT_REQUESTS,
): Promise<R[]> {
  // Few enough to start together in this turn (a firing's items, a job's markers): the same starts, in the same
  // order, without the workers' machinery (its closures and promises were ~1.3 KB an item start in a burst), nor an
  // async frame around Promise.all's promise (issue 43). A task that throws at once rejects, as in an async function.
  if (items.length <= limit && items.length <= STARTS_PER_TURN) {
    try {
      return Promise.all(items.map((item) => task(item)));
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }
  return mapInTurns(items, task, limit);
}

/** mapBounded with workers, yielding to the event loop after every STARTS_PER_TURN starts. */
async function mapInTurns<T, R>(items: readonly T[], task: (item: T) => Promise<R>, limit: number): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  let failed = false;
  let started = 0;
  let turnStartedAt = 0;
  let pause: Promise<void> | undefined;
  /** Undefined while this turn may start more; else the end of the turn, which every starter waits for. */
  const turnOver = (): Promise<void> | undefined => {
    if (pause === undefined && started - turnStartedAt >= STARTS_PER_TURN)
      pause = new Promise((resolve) =>
        setImmediate(() => {
          pause = undefined;
          turnStartedAt = started;
          resolve();
        }),
      );
    return pause;
  };
  const worker = async (): Promise<void> => {
    while (next < items.length && !failed) {
      const wait = turnOver();
      if (wait) {
        await wait;
        continue;
      }
      const index = next++;
      started++;
      try {
        results[index] = await task(items[index]!);
      } catch (error) {
        failed = true; // the other workers start nothing more
        throw error;
      }
    }
  };
  const workers: Array<Promise<void>> = [];
  for (let count = 0; count < Math.min(limit, items.length) && next < items.length && !failed; count++) {
    const wait = turnOver();
    if (wait) await wait;
    const running = worker();
    // Handled by Promise.all below; a failure while the loop waits for its turn must not count as unhandled.
    running.catch(() => undefined);
    workers.push(running);
  }
  await Promise.all(workers);
  return results;
}

/**
 * Runs `task` for every item, at most `limit` at once while `bounded()` holds, and without waiting for a slot while
 * it does not: jobs registering a few hundred at a time while connected, but all together during an outage, so
 * their waits for the connection overlap instead of queueing group after group. Waiting items are woken when a
 * running one ends (the next in line, or all of them once not bounded). `task` should not reject (a rejection
 * rejects the whole, as Promise.all does).
 */
export async function mapBoundedWhile<T, R>(
  items: readonly T[],
  task: (item: T) => Promise<R>,
  limit: number,
  bounded: () => boolean,
): Promise<R[]> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return Promise.all(
    items.map(async (item) => {
      while (running >= limit && bounded()) await new Promise<void>((resolve) => waiting.push(resolve));
      running++;
      try {
        return await task(item);
      } finally {
        running--;
        // The next in line takes the free slot; when no longer bounded, all of them go.
        if (bounded()) waiting.shift()?.();
        else for (const wake of waiting.splice(0)) wake();
      }
    }),
  );
}

/**
 * At most `limit` calls in flight; the others wait their turn, in order (a cache reading a tree of thousands of
 * items reads a bounded number at a time).
 */
export class RequestSlots {
  private inFlight = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(call: () => Promise<T>): Promise<T> {
    if (this.inFlight >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.inFlight++;
    try {
      return await call();
    } finally {
      this.inFlight--;
      this.waiting.shift()?.();
    }
  }
}
