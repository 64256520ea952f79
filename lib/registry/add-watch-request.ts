/**
 * `AddWatchRequest { ustring path; int mode }`, the body of ZooKeeper 3.6+'s `addWatch` (opcode 106), which
 * node-zookeeper-client has no class for (docs/reference/zookeeper.md §2.4, §2.5). Without persistent recursive
 * watches every watch event costs a read to re-arm the watch, and a steady-state firing would read from ZooKeeper
 * (docs/SPEC.md §4.8 says it must not). Sent by the client adapter (zookeeper-client.adapter.ts).
 */
export class AddWatchRequest {
  private pathBytes: Buffer;

  constructor(
    private readonly path: string,
    private readonly mode: number,
  ) {
    this.pathBytes = Buffer.from(path, 'utf8');
  }

  /** A chroot in the connection string: the client asks every request to prefix its path with it. */
  setChrootPath(chroot: string): void {
    if (chroot) this.pathBytes = Buffer.from(this.path === '/' ? chroot : chroot + this.path, 'utf8');
  }

  byteLength(): number {
    return 4 + this.pathBytes.length + 4;
  }

  serialize(buffer: Buffer, offset: number): number {
    let at = buffer.writeInt32BE(this.pathBytes.length, offset);
    at += this.pathBytes.copy(buffer, at);
    at = buffer.writeInt32BE(this.mode, at);
    return at - offset;
  }
}
