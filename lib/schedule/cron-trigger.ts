import { nextFireTime } from './cron-expression.js';

/** setTimeout cannot wait longer than 2^31-1 ms; longer waits are chained. */
const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * Fires `onFire(scheduledAt)` at every cron instant (`leadMs()` early, if asked). Like ElasticJob's Quartz trigger with
 * `withMisfireHandlingInstructionDoNothing`: instants missed while the process was blocked are skipped, never
 * replayed in a burst. The callback must not throw (it is the job's firing, which catches everything).
 */
export class CronTrigger {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private cron: string;
  private timeZone: string | undefined;
  /** Half the time from the instant before to the instant armed now: the most its lead may be. */
  private leadCapMs = 0;

  constructor(
    cron: string,
    timeZone: string | undefined,
    private readonly onFire: (scheduledAt: Date) => void,
    /**
     * Call `onFire` this much before the instant, so that the firing's coordination is done when it comes (asked
     * again as the instant nears: schedule/preparation-lead.ts). Never more than half the time to the instant from
     * the one before, so that a job firing every second is prepared for an instant after the one before has run.
     */
    private readonly leadMs: () => number = () => 0,
    /** The most `leadMs` may grow to: the trigger wakes this early and asks for the lead then. */
    private readonly maxLeadMs = 0,
  ) {
    this.cron = cron;
    this.timeZone = timeZone;
  }

  get isRunning(): boolean {
    return this.running;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.armAfter(new Date());
  }

  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Changes the cron (e.g. after a config change in ZooKeeper) and re-arms from now. */
  reschedule(cron: string, timeZone: string | undefined): void {
    this.cron = cron;
    this.timeZone = timeZone;
    if (!this.running) return;
    clearTimeout(this.timer);
    this.armAfter(new Date());
  }

  /** The next instant the trigger would fire, after now; undefined for a one-off job (no cron: it never fires). */
  nextFireTime(): Date | undefined {
    return this.cron === '' ? undefined : nextFireTime(this.cron, this.timeZone, new Date());
  }

  private armAfter(after: Date): void {
    if (this.cron === '') return; // a one-off job: it runs only when triggered
    const at = nextFireTime(this.cron, this.timeZone, after);
    this.leadCapMs = Math.max(0, (at.getTime() - after.getTime()) / 2);
    this.armAt(at);
  }

  private leadNow(): number {
    return Math.min(this.leadMs(), this.leadCapMs);
  }

  private armAt(at: Date): void {
    if (!this.running) return;
    // Woken as early as the lead may be by then; fire() asks for it and waits for the rest.
    const wait = at.getTime() - Math.min(Math.max(this.maxLeadMs, this.leadMs()), this.leadCapMs) - Date.now();
    if (wait > MAX_TIMEOUT_MS) {
      this.timer = setTimeout(() => this.armAt(at), MAX_TIMEOUT_MS);
      return;
    }
    this.timer = setTimeout(() => this.fire(at), Math.max(0, wait));
  }

  private fire(at: Date): void {
    if (!this.running) return;
    // Woken ahead of the lead (or a little early, as timers may be): never before the lead time.
    const early = at.getTime() - this.leadNow() - Date.now();
    if (early > 0) {
      this.timer = setTimeout(() => this.fire(at), early);
      return;
    }
    // Next instant after max(scheduled, now): skips instants missed while blocked (DoNothing misfire policy).
    this.armAfter(new Date(Math.max(at.getTime(), Date.now() - 1)));
    this.onFire(at);
  }
}
