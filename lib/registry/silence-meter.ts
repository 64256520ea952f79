/**
 * How long ZooKeeper has been silent, net of the time this process itself did not run: the liveness watchdog's
 * judge (zookeeper-session.ts). The watchdog runs every `periodMs`; a check that comes later than that says our
 * loop was stalled (a long synchronous stretch, or a host too busy to schedule us). While stalled we read
 * nothing, and we sent nothing either (no ping went out), so ZooKeeper had nothing to answer: that time is ours,
 * not the server's.
 *
 * Each check's lateness since the last answer is added up, and only the rest of the silence is held against the
 * server. Excusing just the one check after a stall was not enough: its ping then had a single watchdog period to
 * be answered (and read) before the next check judged the whole silence, and under load it was not
 * (request-limits.spec.ts, 4 s sessions: a 2.6 s stall, the ping sent after it dropped 430 ms later; a 1.4 s stall
 * then a 0.9 s one, the answer to the ping unread in between). Java's client gives a ping a third of the session
 * timeout to be answered (ClientCnxn: a ping after readTimeout / 2 of sending nothing, readTimeout being 2/3 of
 * the session timeout); here the server gets the whole limit of our running time.
 *
 * A whole session timeout without an answer is silence whatever its cause: the server may have expired the
 * session, as ZookeeperSession's loss timer counts from the last answer too.
 */
export type Verdict = 'heard' | 'stalled' | 'silent';

export class SilenceMeter {
  private lastCheckAt = 0;
  /** Our own lateness counted since this answer (the last receipt it was counted for). */
  private countedFrom = 0;
  private ownMs = 0;

  /** A new connection: nothing is owed, nothing is late. */
  reset(now: number): void {
    this.lastCheckAt = now;
    this.countedFrom = now;
    this.ownMs = 0;
  }

  /** Time of our own since the last answer (for the log). */
  get ownSilenceMs(): number {
    return this.ownMs;
  }

  /**
   * One watchdog check at `now` (checks are due every `periodMs`), the last bytes received at `lastReceivedAt`:
   * 'heard' within 2/3 of the timeout, 'stalled' when the silence past that is our own, 'silent' when it is the
   * server's.
   */
  check(now: number, lastReceivedAt: number, timeoutMs: number, periodMs: number): Verdict {
    const silentFor = now - lastReceivedAt;
    if (lastReceivedAt !== this.countedFrom) {
      this.countedFrom = lastReceivedAt;
      this.ownMs = 0;
    }
    // Only the part of a late interval after the last answer: before it, the server had answered.
    this.ownMs += Math.min(Math.max(0, now - this.lastCheckAt - periodMs), silentFor - this.ownMs);
    this.lastCheckAt = now;
    const limit = Math.floor((timeoutMs * 2) / 3);
    if (silentFor <= limit) return 'heard';
    if (silentFor < timeoutMs && silentFor - this.ownMs <= limit) return 'stalled';
    return 'silent';
  }
}
