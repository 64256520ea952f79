import { header, withChroot } from './multi-request.js';
import type { NodeStat, ReadAnswer, ReadRequest } from './registry.types.js';

/**
 * ZooKeeper 3.6+'s `multiRead` (opcode 22): one request carrying many getData and getChildren ops, each answered
 * or failed on its own (a missing node fails its op only), which node-zookeeper-client cannot send or read. Filling
 * a job's tree cache reads 25–30 nodes, one request each when a peer made the tree (docs/benchmarks.md, issue 43);
 * in one multiRead the reads of many jobs' caches share a request, its header and its answer frame.
 *
 * Upstream (github:apache/zookeeper, read for this file):
 * - `zookeeper-server/src/main/java/org/apache/zookeeper/ZooDefs.java` (`OpCode`): multiRead 22, getData 4,
 *   getChildren 8, error -1.
 * - `MultiOperationRecord.serialize`: per op a `MultiHeader { int type; boolean done; int err }` (done false, err
 *   -1) and the op's request record (`GetDataRequest`/`GetChildrenRequest { ustring path; boolean watch }`, watch
 *   false as `Op.getData`/`Op.getChildren` write it), then an end header `(-1, true, -1)`.
 * - `MultiResponse.serialize`: per op a MultiHeader (its type; err the error code for an error result) and the
 *   op's response: `GetDataResponse { buffer data; Stat stat }`, `GetChildrenResponse { vector<ustring> children }`
 *   or `ErrorResponse { int err }`; then the end header.
 * - `zookeeper-jute/src/main/resources/zookeeper.jute`: those records, and `Stat` (68 bytes: czxid, mzxid, ctime,
 *   mtime as longs; version, cversion, aversion as ints; ephemeralOwner long; dataLength, numChildren ints; pzxid).
 * - `server/FinalRequestProcessor.java`, case `OpCode.multiRead`: each op's KeeperException becomes its ErrorResult.
 *   A server without the opcode (3.4, 3.5) answers the whole request with UNIMPLEMENTED and closes the connection
 *   (`UnimplementedRequestProcessor`): the transport then reads one node at a time (zookeeper-transport.ts).
 */

export const MULTI_READ = 22;
const GET_DATA = 4;
const GET_CHILDREN = 8;
const ERROR = -1;
const STAT_BYTES = 68;

/** The body of a multiRead request, written straight into the client's buffer (as MultiRequest is). */
export class MultiReadRequest {
  private chroot = '';

  /** Full paths (namespace included); the connection string's chroot is added by setChrootPath. */
  constructor(private readonly reads: readonly ReadRequest[]) {}

  setChrootPath(path: string): void {
    this.chroot = path ?? '';
  }

  byteLength(): number {
    let size = 9; // the end header
    for (const read of this.reads) size += 9 + 4 + Buffer.byteLength(this.path(read.path)) + 1;
    return size;
  }

  serialize(buffer: Buffer, offset: number): number {
    let at = offset;
    for (const read of this.reads) {
      at = header(buffer, at, read.what === 'data' ? GET_DATA : GET_CHILDREN, false);
      const length = buffer.write(this.path(read.path), at + 4, 'utf8');
      buffer.writeInt32BE(length, at);
      at += 4 + length;
      at = buffer.writeUInt8(0, at); // watch: false (the caches' recursive watches cover the nodes)
    }
    return header(buffer, at, -1, true) - offset;
  }

  private path(path: string): string {
    return withChroot(this.chroot, path);
  }
}

/** One op's answer as read: its data and stat, its children, or ZooKeeper's error code for it. */
export type MultiReadResult =
  | { type: typeof GET_DATA; data: Buffer; stat: NodeStat }
  | { type: typeof GET_CHILDREN; children: string[] }
  | { type: typeof ERROR; err: number };

/**
 * Reads the op answer of `type` at `at` into `results`; returns where the next header starts, or -1 when `type` is
 * not a read's (the caller reads it, as multi-answer.ts does for a write multi's answers).
 */
export function readMultiReadResult(type: number, buffer: Buffer, at: number, results: unknown[]): number {
  if (type === GET_DATA) {
    const length = buffer.readInt32BE(at);
    at += 4;
    // A copy: the frame is a slice of a socket chunk, which a kept subarray would keep whole.
    const data = length > 0 ? Buffer.from(buffer.subarray(at, at + length)) : Buffer.alloc(0);
    at += Math.max(0, length);
    results.push({ type, data, stat: readStat(buffer, at) });
    return at + STAT_BYTES;
  }
  if (type === GET_CHILDREN) {
    const count = buffer.readInt32BE(at);
    at += 4;
    const children: string[] = [];
    for (let i = 0; i < count; i++) {
      const length = buffer.readInt32BE(at);
      at += 4;
      children.push(buffer.toString('utf8', at, at + length));
      at += length;
    }
    results.push({ type, children });
    return at;
  }
  return -1;
}

/** A whole MultiResponse of reads (its headers and results), for the tests and any reader without the client's. */
export function readMultiReadAnswer(buffer: Buffer, offset = 0): MultiReadResult[] {
  const results: MultiReadResult[] = [];
  let at = offset;
  for (;;) {
    const type = buffer.readInt32BE(at);
    const done = buffer.readUInt8(at + 4) === 1;
    at += 9;
    if (done) return results;
    if (type === ERROR) {
      results.push({ type, err: buffer.readInt32BE(at) });
      at += 4;
      continue;
    }
    at = readMultiReadResult(type, buffer, at, results);
    if (at < 0) throw new Error(`Unknown type: ${type} in a multiRead answer`);
  }
}

/** A persistent node's ephemeralOwner (session 0), as the hex of its 8 bytes would give it. */
const NO_OWNER = '0000000000000000';

/**
 * The library's NodeStat from a jute Stat (the fields the client's Stat gives the adapter's toStat). No BigInt for
 * mtime (a millisecond time fits a double) and no hex string for a persistent node's owner: a new job's set-up is
 * read back with a stat a node (issue 43).
 */
function readStat(buffer: Buffer, at: number): NodeStat {
  const owner =
    buffer.readInt32BE(at + 44) === 0 && buffer.readInt32BE(at + 48) === 0
      ? NO_OWNER
      : buffer.toString('hex', at + 44, at + 52);
  return {
    mzxid: buffer.readBigInt64BE(at + 8),
    mtime: buffer.readInt32BE(at + 24) * 0x1_0000_0000 + buffer.readUInt32BE(at + 28),
    version: buffer.readInt32BE(at + 32),
    cversion: buffer.readInt32BE(at + 36),
    ephemeralOwner: owner,
    numChildren: buffer.readInt32BE(at + 56),
  };
}

/**
 * The answers in the order asked: NodeData for a getData, the names for a getChildren, undefined for a node that is
 * not there (NO_NODE, -101). Another error code of an op is handed to `failed` (which throws).
 */
export function answersOf(
  reads: readonly ReadRequest[],
  results: readonly MultiReadResult[],
  failed: (read: ReadRequest, code: number) => never,
): ReadAnswer[] {
  if (results.length !== reads.length)
    throw new Error(`a multiRead of ${reads.length} ops was answered with ${results.length} results`);
  return results.map((result, index) => {
    const read = reads[index]!;
    if (result.type === ERROR) {
      if (result.err === NO_NODE) return undefined;
      return failed(read, result.err);
    }
    if (result.type === GET_DATA && read.what === 'data') return { data: result.data, stat: result.stat };
    if (result.type === GET_CHILDREN && read.what === 'children') return result.children;
    throw new Error(`a multiRead answered ${read.what} of ${read.path} with op type ${result.type}`);
  });
}

/** ZooKeeper's NONODE (KeeperException.Code). */
const NO_NODE = -101;
