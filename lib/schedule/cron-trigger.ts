import { nextFireTime } from './cron-expression.js';

/** setTimeout cannot wait longer than 2^31-1 ms; longer waits are chained. */
const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * Fires `onFire(scheduledAt)` at every cron instant (`leadMs` early, if asked). Like ElasticJob's Quartz trigger with
 * `withMisfireHandlingInstructionDoNothing`: instants missed while the process was blocked are skipped, never
 * replayed in a burst. The callback must not throw (it is the job's firing, which catches everything).
 */
export class CronTrigger {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private cron: string;
  private timeZone: string | undefined;

  constructor(
    cron: string,
    timeZone: string | undefined,
    private readonly onFire: (scheduledAt: Date) => void,
    /** Call `onFire` this much before the instant, so that the firing's coordination is done when it comes. */
    private readonly leadMs = 0,
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
    this.armAt(at);
  }

  private armAt(at: Date): void {
    if (!this.running) return;
    const wait = at.getTime() - this.leadMs - Date.now();
    if (wait > MAX_TIMEOUT_MS) {
      this.timer = setTimeout(() => this.armAt(at), MAX_TIMEOUT_MS);
      return;
    }
    this.timer = setTimeout(() => this.fire(at), Math.max(0, wait));
  }

  private fire(at: Date): void {
    if (!this.running) return;
    // Timers may fire a little early; never before the lead time.
    if (Date.now() < at.getTime() - this.leadMs) {
      this.timer = setTimeout(() => this.fire(at), at.getTime() - this.leadMs - Date.now());
      return;
    }
    // Next instant after max(scheduled, now): skips instants missed while blocked (DoNothing misfire policy).
    this.armAfter(new Date(Math.max(at.getTime(), Date.now() - 1)));
    this.onFire(at);
  }
}
