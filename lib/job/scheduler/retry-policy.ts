import type { Logger } from '@nestjs/common';
import { describeError, isConnectionTrouble, registryErrorCode } from '../../errors/elastic-job.errors.js';
import type { ConnectionView } from '../../registry/registry-center.js';
import { backoffMs, delay } from '../../util/deferred.js';

export interface RetrySettings {
  baseSleepTimeMs: number;
  maxSleepTimeMs: number;
  maxRetries: number;
}

/**
 * The one retry policy of a job's registration (the module's `zookeeper` retry options): connection trouble within
 * a step is retried at once with backoff (`quickly`), and a (re-)registration that still fails is tried again in
 * the background, with a longer backoff, while connected, until it succeeds, fails for good or the job stops.
 */
export class RetryPolicy {
  /** The background loop, while one runs: one at a time. */
  private background: Promise<void> | undefined;

  constructor(
    private readonly settings: RetrySettings,
    private readonly connection: ConnectionView,
    private readonly logger: Logger,
    /** The job's lifecycle: nothing is retried after it stops (its signal is asked for only by a wait). */
    private readonly lifecycle: { readonly stopped: boolean; readonly stopSignal: AbortSignal },
  ) {}

  /** Runs `action`, retrying connection trouble up to maxRetries times with backoff; other errors are thrown at once. */
  async quickly(what: string, action: () => Promise<void>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await action();
        return;
      } catch (error) {
        // A closed registry center will not come back: only connection trouble that may pass is retried.
        const transient = isConnectionTrouble(error) && registryErrorCode(error) !== 'CLOSED';
        if (!transient || this.lifecycle.stopped || attempt >= this.settings.maxRetries) throw error;
        const wait = backoffMs(attempt, this.settings.baseSleepTimeMs, this.settings.maxSleepTimeMs);
        this.logger.warn(
          `${what} hit ${registryErrorCode(error)}; retry ${attempt + 1}/${this.settings.maxRetries} in ${wait} ms`,
        );
        await this.connection.waitForConnection(this.connection.sessionTimeoutMs);
        await delay(wait);
      }
    }
  }

  /**
   * Tries `attempt` again (up to ten times maxSleepTimeMs between tries) while `failing()` says why it still fails,
   * until it succeeds or the job stops. Waits while disconnected. One loop at a time: a second call while one runs
   * does nothing.
   */
  inBackground(what: string, attempt: () => Promise<boolean>, failing: () => string | undefined): void {
    if (this.background) return;
    const run = async (): Promise<void> => {
      for (let round = 0; !this.lifecycle.stopped; round++) {
        const why = failing();
        if (why === undefined) return;
        const wait = backoffMs(round, this.settings.baseSleepTimeMs, 10 * this.settings.maxSleepTimeMs);
        this.logger.warn(`${what} failed (${why}); trying again in ${wait} ms`);
        await delay(wait, this.lifecycle.stopSignal);
        if (this.lifecycle.stopped) return;
        // Not connected: the next round waits again (a closed registry answers false at once).
        if (!(await this.connection.waitForConnection(this.connection.sessionTimeoutMs))) continue;
        if (this.lifecycle.stopped || (await attempt())) return;
      }
    };
    this.background = run()
      .catch((error: unknown) => this.logger.error(`${what} failed for good: ${describeError(error)}`))
      .finally(() => (this.background = undefined));
  }
}
