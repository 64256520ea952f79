import type { Socket } from 'node:net';

/**
 * Two fixes to node-zookeeper-client's socket handling, which a 1000-job start-up profile showed costing about a
 * fifth of the process's CPU (docs/reference/zookeeper.md §3: the client is unmaintained, its version is pinned).
 * The adapter (zookeeper-client.adapter.ts) installs them into the client:
 *
 * - Reading: on every answer in a chunk the client copies the rest of the chunk into a new buffer (it re-enters
 *   its handler with `concat(rest, empty)`), quadratic in the number of answers per chunk. FrameReader cuts the
 *   chunks into whole frames first, each handed over on its own, so the client never keeps a remainder to copy.
 * - Writing: the client writes every request with its own `socket.write`, a system call each. corkEachTick makes
 *   the writes of one tick leave together.
 */

/** ZooKeeper frames: a 4-byte big-endian length, then that many bytes. */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Bytes needed before the next frame can be cut: 4 (its length) or 4 + its length. */
  private needed = 4;

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
