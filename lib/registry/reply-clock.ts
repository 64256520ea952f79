/**
 * When ZooKeeper last answered one of our requests or pings: the latest moment we know the server heard from us,
 * give or take its own answering time. The server expires a session a session timeout after the last packet it got
 * from the client (ZooKeeper's SessionTrackerImpl.touchSession), so the loss of a cut-off session is counted from
 * here (zookeeper-session.ts). A node event (xid -1) is not an answer: a client that only listens keeps receiving
 * them while its last ping ages, and counting from them made a silently partitioned instance abort its items 403 ms
 * after a peer had taken one over (test/faults/connection-faults.spec.ts, "silent partition").
 */
export class ReplyClock {
  private lastAt = 0;

  /** A whole frame after the connect answer. */
  see(frame: Buffer): void {
    if (frame.length >= 8 && frame.readInt32BE(4) !== NOTIFICATION_XID) this.lastAt = Date.now();
  }

  /** A connection made: its connect answer is one. */
  reset(now: number): void {
    this.lastAt = now;
  }

  get lastReplyAt(): number {
    return this.lastAt;
  }
}

/** The xid of a node event's frame (ZooKeeper's ClientCnxn: -1 notification, -2 ping, -4 auth, -8 set watches). */
const NOTIFICATION_XID = -1;
