import type { Logger } from '@nestjs/common';
import { describeItems } from '../../util/item-list.js';
import { servedByLastStart, type FiringStartMark } from './rerun-order.js';

/** What the TRIGGER firing that starts next takes: the trigger's job parameter, and the items a rerun limits it to. */
export interface ManualFiring {
  jobParameter: string | undefined;
  /** undefined: all of this instance's items. */
  onlyItems: number[] | undefined;
}

/**
 * The manual firing waiting to start (`trigger/{instanceId}`, `rerun/{instanceId}`): at most one, as ElasticJob queues
 * one, holding what it carries until the executor starts it. Reruns are judged against the last firing's start in
 * ZooKeeper's order (rerun-order.ts, docs/operations/operator-api.md "Running items again").
 */
export class ManualFirings {
  /** A manual firing was asked for and has not started yet. */
  private pending = false;
  private jobParameter: string | undefined;
  /**
   * The items the pending firing is limited to (reruns), or undefined for all of this instance's: a trigger queued
   * beside reruns runs everything, reruns queued together run their items together.
   */
  private items: number[] | undefined;
  private lastStart: FiringStartMark | undefined;

  constructor(
    private readonly logger: Logger,
    /** The highest zxid this process has read from ZooKeeper (registry/zxid-watermark.ts), when the client tells it. */
    private readonly seenZxid: () => bigint | undefined,
  ) {}

  get isPending(): boolean {
    return this.pending;
  }

  /** A trigger: the last parameter wins, and it runs every item of this instance. */
  trigger(jobParameter: string | undefined): void {
    this.jobParameter = jobParameter;
    this.items = undefined;
    this.pending = true;
  }

  /** A rerun of `asked`; false when the last firing's start already served all of them (nothing to request). */
  rerun(asked: readonly number[], askedZxid: bigint | undefined): boolean {
    const items = this.notStartedSince(asked, askedZxid);
    if (items.length === 0) return false;
    if (!this.pending) this.items = [...items];
    else if (this.items !== undefined) this.items = [...new Set([...this.items, ...items])];
    this.pending = true;
    return true;
  }

  /**
   * A firing starts these items: remembered for reruns that reach us later, and a rerun of them waiting here is served
   * by these starts, which come after its ask. True when nothing is left pending of a rerun that was.
   */
  started(items: readonly number[]): boolean {
    const seen = this.seenZxid();
    this.lastStart = seen === undefined ? undefined : { items, zxid: seen };
    const asked = this.items;
    if (!this.pending || asked === undefined) return false; // nothing pending, or a trigger: it runs everything
    const left = asked.filter((item) => !items.includes(item));
    if (left.length === asked.length) return false;
    const served = asked.filter((item) => items.includes(item));
    this.logger.log(`rerun of items [${describeItems(served)}] served by the firing starting them now`);
    if (left.length > 0) {
      this.items = left;
      return false;
    }
    this.clear();
    return true;
  }

  /** The pending firing's parameter and items, taken by the TRIGGER firing that starts now. */
  take(): ManualFiring {
    const taken = { jobParameter: this.jobParameter, onlyItems: this.items };
    this.clear();
    return taken;
  }

  clear(): void {
    this.jobParameter = undefined;
    this.items = undefined;
    this.pending = false;
  }

  /** The rerun's items less those the last firing started after it was asked (rerun-order.ts). */
  private notStartedSince(items: readonly number[], askedZxid: bigint | undefined): readonly number[] {
    const served = servedByLastStart(items, askedZxid, this.lastStart);
    if (served.length === 0) return items;
    this.logger.log(`rerun of items [${describeItems(served)}] served by the firing that started them after it`);
    return items.filter((item) => !served.includes(item));
  }
}
