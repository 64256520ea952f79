/**
 * How long before its cron instant a firing starts its coordination (the sharding check and the running markers), so
 * that its items start on the instant. One job needs one ZooKeeper write, a millisecond or two: the floor of 25 ms
 * covers it. A thousand jobs firing at one instant need a few hundred milliseconds of this process's time together
 * (issue 32's burst, docs/benchmarks.md), and the last of them would start its items that late. So each prepared
 * firing tells how long its preparation took, and the lead becomes the longest of them with a fifth more, up to one
 * second; it halves every half hour after, so that a lighter schedule goes back to preparing late.
 *
 * One per process: what delays a preparation is the event loop and the ZooKeeper session, which all jobs share. A
 * firing that had to wait for a resharding does not count (that wait is the cluster's, not the instant's).
 */
export class PreparationLead {
  static readonly MIN_MS = 25;
  static readonly MAX_MS = 1000;
  static readonly HALF_LIFE_MS = 30 * 60_000;

  /** The longest preparation told, as it stood at `toldAt`. */
  private longestMs = 0;
  private toldAt = 0;
  /** Whether any preparation was told yet. */
  private told = false;

  /**
   * The lead for an instant armed now. Before any preparation was told (the first instant after start-up), the
   * most: how long this process's instants take to prepare is not known yet, and the floor made a thousand jobs'
   * first firing start its items hundreds of milliseconds late while later ones, prepared with what it taught, were
   * on time (issue 43). The first preparations told replace it.
   */
  get ms(): number {
    if (!this.told) return PreparationLead.MAX_MS;
    const needed = this.decayed(Date.now()) * 1.2;
    return Math.round(Math.min(PreparationLead.MAX_MS, Math.max(PreparationLead.MIN_MS, needed)));
  }

  /** A firing asked to prepare at `since` had its items ready to start (markers written) at `readyAt`. */
  prepared(since: number, readyAt: number): void {
    const took = readyAt - since;
    this.longestMs = this.told ? Math.max(this.decayed(readyAt), took) : took;
    this.told = true;
    this.toldAt = readyAt;
  }

  private decayed(now: number): number {
    return this.longestMs * 0.5 ** (Math.max(0, now - this.toldAt) / PreparationLead.HALF_LIFE_MS);
  }
}

/** This process's. */
export const preparationLead = new PreparationLead();
