import { StoredConfigurationError } from '../errors/elastic-job.errors.js';
import type { ElasticJobOperator } from '../lifecycle/elastic-job-operator.js';
import type { JobBriefInfo } from '../lifecycle/lifecycle.types.js';
import { mapBounded } from '../registry/request-limits.js';
import { upcomingFireTimes } from '../schedule/cron-preview.js';
import type { ConsoleJobRow } from './model/console-model.js';

/** Reads in flight at once when many jobs changed: the session stays free for the app's own jobs. */
const READ_CONCURRENCY = 16;

/** Which rows must be read again before the next answer: all of them, or these jobs' (none: the rows are current). */
type Staleness = { readonly all: true } | { readonly all: false; readonly names: ReadonlySet<string> };

const EVERYTHING: Staleness = { all: true };

/**
 * The console's job rows, kept between requests and read again only where something changed (so a page of 1000
 * jobs costs reads for what moved, not for everything). What is stale is one value: every row, or some jobs'.
 */
export class JobRows {
  private readonly rows = new Map<string, ConsoleJobRow>();
  private staleness: Staleness = EVERYTHING;
  private refreshing: Promise<void> | undefined;

  constructor(private readonly operator: () => ElasticJobOperator) {}

  /** Every row to be read again (no watch said what changed: at start, after a resync, after an action on many). */
  markAll(): void {
    this.staleness = EVERYTHING;
  }

  /** These jobs' rows to be read again. */
  mark(jobNames: Iterable<string>): void {
    if (this.staleness.all) return;
    this.staleness = { all: false, names: new Set([...this.staleness.names, ...jobNames]) };
  }

  /** The rows by job name, read again first where stale (one refresh at a time; requests meanwhile share it). */
  async current(watched: boolean): Promise<ConsoleJobRow[]> {
    // Without a watch nothing tells what changed: everything is read every time.
    if (!watched) this.markAll();
    if (this.staleness.all || this.staleness.names.size > 0)
      await (this.refreshing ??= this.readStale().finally(() => (this.refreshing = undefined)));
    return [...this.rows.values()].sort((a, b) => (a.jobName < b.jobName ? -1 : 1));
  }

  /** A row read for a job's detail is kept: it is the newest. */
  remember(row: ConsoleJobRow): void {
    this.rows.set(row.jobName, row);
  }

  private async readStale(): Promise<void> {
    const stale = this.staleness;
    this.staleness = { all: false, names: new Set() };
    try {
      if (stale.all) {
        const all = await this.operator().getAllJobsBriefInfo();
        const names = new Set(all.map((brief) => brief.jobName));
        for (const name of this.rows.keys()) if (!names.has(name)) this.rows.delete(name);
        await mapBounded(
          all,
          async (brief) => void this.rows.set(brief.jobName, await this.withZone(brief)),
          READ_CONCURRENCY,
        );
        return;
      }
      await mapBounded(
        [...stale.names],
        async (name) => {
          const brief = await this.operator().getJobBriefInfo(name);
          if (brief === undefined) this.rows.delete(name);
          else this.rows.set(name, await this.withZone(brief));
        },
        READ_CONCURRENCY,
      );
    } catch (error) {
      // Read again by the next request.
      if (stale.all) this.markAll();
      else this.mark(stale.names);
      throw error;
    }
  }

  /** The row of a job whose brief is known: the zone is in the configuration only (JobBriefInfo has the cron). */
  async withZone(brief: JobBriefInfo): Promise<ConsoleJobRow> {
    try {
      return withSchedule(brief, (await this.operator().getJobConfiguration(brief.jobName))?.timeZone);
    } catch (error) {
      // One job's unreadable config node must not take the whole list down: its row shows no zone.
      if (!(error instanceof StoredConfigurationError)) throw error;
      return withSchedule(brief, undefined);
    }
  }
}

/** A jobs-list row: the brief, with the zone and the cron's next fire time in it. */
export function withSchedule(brief: JobBriefInfo, timeZone: string | undefined): ConsoleJobRow {
  let nextFireTime: string | undefined;
  if (brief.cron) {
    try {
      nextFireTime = upcomingFireTimes(brief.cron, timeZone, 1, new Date())[0]?.toISOString();
    } catch {
      nextFireTime = undefined; // a stored cron this library cannot read: shown without a next time
    }
  }
  return { ...brief, timeZone, nextFireTime };
}
