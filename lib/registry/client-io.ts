import type { Socket } from 'node:net';

/**
 * Fixes to node-zookeeper-client's socket handling, which start-up profiles showed costing about a fifth of the
 * process's CPU at 1000 jobs, and a 10,000-job one more (docs/reference/zookeeper.md §3: the client is unmaintained, its
 * version is pinned). The adapter (zookeeper-client.adapter.ts) installs them into the client:
 *
 * - Reading: on every answer in a chunk the client copies the rest of the chunk into a new buffer (it re-enters
 *   its handler with `concat(rest, empty)`), quadratic in the number of answers per chunk. FrameReader cuts the
 *   chunks into whole frames first, each handed over on its own, so the client never keeps a remainder to copy.
 * - Writing: the client writes every request with its own `socket.write`, a system call each. corkEachTick makes
 *   the writes of one tick leave together.
 * - Matching answers: the client keeps the requests awaiting an answer in an array and takes each answer's with
 *   `shift()`, which copies the array once it is long: quadratic when thousands of jobs register at once (9 of 35 s
 *   of CPU in one 10,000-job start-up profile). AnswerQueue has the same push/shift, in constant time.
 * - Notifications: the client decodes each through two generic records (a reply header, a WatcherEvent), a dozen
 *   objects a frame; a 10,000-job start-up receives about 270,000 of them. readNotification reads the same fields
 *   straight from the frame.
 */

/** A frame's xid when it is a watch notification (the client's jute.XID_NOTIFICATION). */
const XID_NOTIFICATION = -1;

/**
 * A watch notification frame (`int length; ReplyHeader { int xid; long zxid; int err }; WatcherEvent { int type;
 * int state; ustring path }`) as the client's WatcherEvent would read it, the chroot taken off the path as the client
 * does; undefined for any other frame, and for a notification of a type other than 1 to 4 (the node events) or
 * without a path, which are left to the client.
 */
export function readNotification(
  frame: Buffer,
  chroot: string | undefined,
): { type: number; path: string } | undefined {
  if (frame.length < 32 || frame.readInt32BE(4) !== XID_NOTIFICATION) return undefined;
  const type = frame.readInt32BE(20);
  const pathLength = frame.readInt32BE(28);
  if (type < 1 || type > 4 || pathLength < 0 || 32 + pathLength > frame.length) return undefined;
  let path = frame.toString('utf8', 32, 32 + pathLength);
  if (chroot) path = path === chroot ? '/' : path.substring(chroot.length);
  return { type, path };
}

/** A FIFO with the two array methods the client's ConnectionManager uses on its `pendingQueue`. */
export class AnswerQueue<T> {
  private items: Array<T | undefined> = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): number {
    this.items.push(item);
    return this.length;
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    // Compact once the consumed half is large, so memory follows what is pending.
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}

/** ZooKeeper frames: a 4-byte big-endian length, then that many bytes. */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Bytes needed before the next frame can be cut: 4 (its length) or 4 + its length. */
  private needed = 4;

  /** The socket's first frame is still to come (the connect response; see the adapter). Its reader sets it. */
  first = true;

  constructor(readonly socket: Socket | undefined) {}

  *push(data: Buffer): Generator<Buffer> {
    this.chunks.push(data);
    this.buffered += data.length;
    if (this.buffered < this.needed) return;
    const buffer = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered);
    let offset = 0;
    while (buffer.length - offset >= 4) {
      const end = offset + 4 + buffer.readInt32BE(offset);
      if (end > buffer.length) break;
      yield buffer.subarray(offset, end);
      offset = end;
    }
    const rest = buffer.subarray(offset);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    this.needed = rest.length >= 4 ? 4 + rest.readInt32BE(0) : 4;
  }
}

export function corkEachTick(socket: Socket): void {
  const marked = socket as Socket & { __elasticJobCorked?: boolean };
  if (marked.__elasticJobCorked) return;
  marked.__elasticJobCorked = true;
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  let corked = false;
  socket.write = ((...args: unknown[]): boolean => {
    if (!corked && !socket.destroyed) {
      corked = true;
      socket.cork();
      // One uncork per cork, always: a cork left open would hold every later request back.
      process.nextTick(() => {
        corked = false;
        socket.uncork();
      });
    }
    return write(...args);
  }) as Socket['write'];
}
