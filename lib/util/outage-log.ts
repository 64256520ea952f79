import type { Logger } from '@nestjs/common';
import { describeError } from '../errors/elastic-job.errors.js';

/** While a dependency stays away, how often the count of failures is said. */
export const OUTAGE_REPORT_INTERVAL_MS = 60_000;

/**
 * The log of one dependency's outages (a broker, a tracing database): a warning when it goes away, a count of what
 * failed meanwhile at most once a OUTAGE_REPORT_INTERVAL_MS, and one line when it answers again, instead of a line
 * (or a stack) per failed request. What each failure was is the caller's to report otherwise (an event per item).
 */
export class OutageLog {
  private since: number | undefined;
  private failures = 0;
  private lastReport = 0;
  private lastError = '';

  constructor(
    private readonly logger: Pick<Logger, 'warn' | 'log'>,
    /** What went away, as the lines name it: `the tracing database`, `'report.build' through client 'WORKERS'`. */
    readonly dependency: string,
    /** What fails while it is away, plural, for the counts: `item(s)`, `write(s)`. */
    private readonly what: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** True while the dependency is away (a failure seen, no success since). */
  get away(): boolean {
    return this.since !== undefined;
  }

  /** One failure; `detail` says what the caller will do (retry, drop), on the first line only. */
  failed(error: unknown, detail = ''): void {
    const now = this.now();
    this.failures++;
    this.lastError = describeError(error);
    if (this.since === undefined) {
      this.since = now;
      this.lastReport = now;
      this.logger.warn(
        `${this.dependency} is unavailable: ${this.lastError}${detail ? `; ${detail}` : ''} (failures are counted ` +
          `until it answers again)`,
      );
      return;
    }
    if (now - this.lastReport >= OUTAGE_REPORT_INTERVAL_MS) {
      this.lastReport = now;
      this.logger.warn(
        `${this.dependency} still unavailable after ${seconds(now - this.since)}: ${this.failures} ${this.what} ` +
          `failed so far (last: ${this.lastError})`,
      );
    }
  }

  /** It answered: said once, with what failed while it was away. */
  recovered(extra = ''): void {
    if (this.since === undefined) return;
    this.logger.log(
      `${this.dependency} is available again after ${seconds(this.now() - this.since)}: ${this.failures} ` +
        `${this.what} failed while it was away${extra ? `; ${extra}` : ''}`,
    );
    this.since = undefined;
    this.failures = 0;
  }
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
