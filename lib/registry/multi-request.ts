/**
 * ZooKeeper `multi` requests written straight into one buffer. node-zookeeper-client's own Transaction builds a
 * generic jute record per op and measures every record again for each level of nesting; on a 1000-job firing
 * profile that was a third of all the memory allocated. Same bytes on the wire (MultiTransactionRecord), and the
 * answer is still read by the client (its MultiResponse reader), so only the request side is ours. Sent by the
 * client adapter (zookeeper-client.adapter.ts).
 */

const OP = { create: 1, remove: 2, setData: 5, check: 13 } as const;
/** -1 matches any version. (The client's own Transaction also turns 0 into -1, its bug #67; not here.) */
const ANY_VERSION = -1;

export type MultiOp =
  | { op: 'create'; path: string; data: Buffer; flags: number }
  | { op: 'setData'; path: string; data: Buffer; version?: number }
  | { op: 'remove'; path: string; version?: number }
  | { op: 'check'; path: string; version?: number };

export interface MultiAcl {
  permission: number;
  scheme: string;
  id: string;
}

/** The ACL of created nodes as jute writes it (`vector<ACL>`, each `int perms; ustring scheme; ustring id`), once. */
export function multiAcl(acls: readonly MultiAcl[]): Buffer {
  const parts = acls.map((acl) => ({
    permission: acl.permission,
    scheme: Buffer.from(acl.scheme, 'utf8'),
    id: Buffer.from(acl.id, 'utf8'),
  }));
  const buffer = Buffer.alloc(4 + parts.reduce((size, part) => size + 12 + part.scheme.length + part.id.length, 0));
  let at = buffer.writeInt32BE(parts.length, 0);
  for (const part of parts) {
    at = buffer.writeInt32BE(part.permission, at);
    at = buffer.writeInt32BE(part.scheme.length, at);
    at += part.scheme.copy(buffer, at);
    at = buffer.writeInt32BE(part.id.length, at);
    at += part.id.copy(buffer, at);
  }
  return buffer;
}

/**
 * Bytes one op takes in a multi request: its MultiHeader, path, version or flags, and for creates and setData its
 * data (and a create's ACL). The one measure both the encoder and the request-size limit use.
 */
export function multiOpSize(op: { op: MultiOp['op']; data?: Buffer }, pathBytes: number, aclBytes: number): number {
  const base = 9 + 4 + pathBytes + 4;
  if (op.op === 'create') return base + 4 + op.data!.length + aclBytes;
  if (op.op === 'setData') return base + 4 + op.data!.length;
  return base;
}

/**
 * `MultiTransactionRecord`: per op a `MultiHeader { int type; boolean done; int err }` and its request, then an end
 * header.
 */
export class MultiRequest {
  private chroot = '';
  private size: number | undefined;

  constructor(
    private readonly ops: readonly MultiOp[],
    /** The ACL of created nodes, already serialized (see `multiAcl`). */
    private readonly acl: Buffer,
  ) {}

  setChrootPath(path: string): void {
    this.chroot = path ?? '';
    this.size = undefined;
  }

  byteLength(): number {
    if (this.size !== undefined) return this.size;
    let size = 9; // the end header
    for (const op of this.ops) size += multiOpSize(op, Buffer.byteLength(this.path(op.path)), this.acl.length);
    return (this.size = size);
  }

  serialize(buffer: Buffer, offset: number): number {
    let at = offset;
    for (const op of this.ops) {
      at = header(buffer, at, OP[op.op], false);
      const path = this.path(op.path);
      const pathLength = buffer.write(path, at + 4, 'utf8');
      buffer.writeInt32BE(pathLength, at);
      at += 4 + pathLength;
      if (op.op === 'create') {
        at = buffer.writeInt32BE(op.data.length, at);
        at += op.data.copy(buffer, at);
        at += this.acl.copy(buffer, at);
        at = buffer.writeInt32BE(op.flags, at);
      } else if (op.op === 'setData') {
        at = buffer.writeInt32BE(op.data.length, at);
        at += op.data.copy(buffer, at);
        at = buffer.writeInt32BE(op.version ?? ANY_VERSION, at);
      } else {
        at = buffer.writeInt32BE(op.version ?? ANY_VERSION, at);
      }
    }
    at = header(buffer, at, -1, true);
    return at - offset;
  }

  private path(path: string): string {
    return withChroot(this.chroot, path);
  }
}

/** One op's MultiHeader (jute: type, done, err), as multi and multiRead requests both start each op and end. */
export function header(buffer: Buffer, at: number, type: number, done: boolean): number {
  at = buffer.writeInt32BE(type, at);
  at = buffer.writeUInt8(done ? 1 : 0, at);
  return buffer.writeInt32BE(-1, at);
}

/** A path under the connection string's chroot, as the client's own requests send it. */
export function withChroot(chroot: string, path: string): string {
  if (!chroot) return path;
  return path === '/' ? chroot : chroot + path;
}
