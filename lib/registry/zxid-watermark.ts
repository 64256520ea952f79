/**
 * The highest zxid this registry center has seen in any frame from ZooKeeper (answers, node events and pings carry
 * one in their reply header: `int xid; long zxid; int err`), across its sessions. A change whose zxid is at most this
 * had happened on the server before the frame that raised it was read, so before whatever the process did next: a
 * rerun asked before a firing started its items is told from one asked after it by this order, whichever of the two
 * the process heard of first (job-executor.ts). Kept as two 32-bit halves: a frame costs no BigInt.
 */
export class ZxidWatermark {
  private high = 0;
  private low = 0;

  /** A whole frame after the connect answer: its reply header's zxid (ignored when not positive). */
  see(frame: Buffer): void {
    if (frame.length < 16) return;
    const high = frame.readInt32BE(8);
    if (high < this.high) return;
    const low = frame.readUInt32BE(12);
    if (high === this.high && low <= this.low) return;
    this.high = high;
    this.low = low;
  }

  value(): bigint {
    return (BigInt(this.high) << 32n) | BigInt(this.low);
  }
}
