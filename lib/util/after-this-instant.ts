import { Logger } from '@nestjs/common';

/**
 * Work that must not delay what starts at this instant: the events, logs and bookkeeping of a firing. A thousand jobs
 * firing at one cron instant wake in one pass of the event loop's timers; work queued here runs together after that
 * pass (in `setImmediate`), so the last job's items start as early as the first's would alone (issue 32's burst,
 * docs/benchmarks.md). Run in order; the work must catch its own failures (one that throws anyway is logged, and the
 * rest still runs).
 */
let queue: Array<() => void> = [];
/**
 * Node's own, taken when this module loads: a test's fake timers (installed later) must not hold back the events
 * and completions of firings, as they never held back the microtasks these used before.
 */
const nextTurn = globalThis.setImmediate;

export function afterThisInstant(work: () => void): void {
  queue.push(work);
  if (queue.length === 1) nextTurn(runQueued);
}

/** Resolves after the work queued so far (and the other timers and I/O callbacks of this pass) has run. */
export function untilAfterThisInstant(): Promise<void> {
  return new Promise((resolve) => afterThisInstant(resolve));
}

function runQueued(): void {
  const work = queue;
  queue = [];
  for (const run of work) {
    try {
      run();
    } catch (error) {
      // Every caller catches its own failures; one that does not must not drop the rest of the batch.
      new Logger('ElasticJob').error(`deferred work failed: ${String(error)}`);
    }
  }
}
