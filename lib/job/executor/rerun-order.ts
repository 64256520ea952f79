/** A firing's start as a rerun judges it: its items, and the highest zxid seen when it started them. */
export interface FiringStartMark {
  items: readonly number[];
  zxid: bigint;
}

/**
 * Which of a rerun's items the last firing already started after the rerun was asked, in ZooKeeper's order: the
 * rerun node's zxid at most what had been seen when the firing started them (zxid-watermark.ts). Consuming the node
 * takes two round trips, so a firing that waited for a resharding may start the items before the rerun reaches the
 * executor, though the rerun was written first: a workflow's hand-over then ran them twice (workflow-faults.spec saw
 * it; docs/guide/workflows.md, "Faults"). Without a zxid (a registry center that does not tell) nothing is served.
 */
export function servedByLastStart(
  items: readonly number[],
  askedZxid: bigint | undefined,
  last: FiringStartMark | undefined,
): number[] {
  if (askedZxid === undefined || last === undefined || last.zxid < askedZxid) return [];
  return items.filter((item) => last.items.includes(item));
}
