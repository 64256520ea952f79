import type { TransactionOp } from './registry.types.js';

/**
 * ZooKeeper refuses a request larger than `jute.maxbuffer` (0xfffff bytes, 1 MiB less one, by default; ZooKeeper
 * Administrator's Guide, "Unsafe Options") by dropping the connection, and node-zookeeper-client then reports a
 * plain connection loss. Nothing we send may come near it (README, "Guarantees": the item maximum).
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

/** Bytes an op takes in a multi request (its MultiHeader, path, data, ACL, version or flags), ACL as given. */
export function multiOpBytes(op: TransactionOp, aclBytes: number): number {
  const base = 9 + 4 + Buffer.byteLength(op.path, 'utf8') + 4;
  if (op.op === 'create') return base + 4 + op.data.length + aclBytes;
  if (op.op === 'setData') return base + 4 + op.data.length;
  return base;
}

/** Cuts ops, in order, into batches within MULTI_BATCH_BYTES and MULTI_BATCH_OPS (an op larger than that goes alone). */
export function multiBatches(ops: readonly TransactionOp[], aclBytes: number): TransactionOp[][] {
  const batches: TransactionOp[][] = [];
  let batch: TransactionOp[] = [];
  let bytes = 0;
  for (const op of ops) {
    const size = multiOpBytes(op, aclBytes);
    if (batch.length > 0 && (bytes + size > MULTI_BATCH_BYTES || batch.length >= MULTI_BATCH_OPS)) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(op);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** Runs `task` for every item with at most `limit` running at once; resolves with the results in order, or rejects with the first failure. */
export async function mapBounded<T, R>(items: readonly T[], task: (item: T) => Promise<R>, limit = MAX_CONCURRENT_REQUESTS): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failed) {
      const index = next++;
      try {
        results[index] = await task(items[index]!);
      } catch (error) {
        failed = true; // the other workers start nothing more
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
