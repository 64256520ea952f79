import { Logger } from '@nestjs/common';

/**
 * Work that must not delay what starts at this instant: the events, logs and bookkeeping of a firing. A thousand jobs
 * firing at one cron instant wake in one pass of the event loop's timers; work queued here runs together after that
 * pass (in `setImmediate`), so the last job's items start as early as the first's would alone (issue 32's burst,
 * docs/benchmarks.md). Run in order; the work must catch its own failures (one that throws anyway is logged, and the
 * rest still runs).
 */
/**
 * Five slots a piece of work, in order: a function, then the four arguments it is called with (undefined for
 * afterThisInstant's work), so that afterThisInstantCall queues a call without a closure (a burst emits thousands of
 * events). Two arrays taken in turn, filled up to `queued`, keep their size between bursts: growing a fresh one to a
 * burst's 25,000 slots each time copied it a dozen times.
 */
let queue: unknown[] = [];
let spare: unknown[] = [];
let queued = 0;
const SLOTS = 5;
/**
 * Node's own, taken when this module loads: a test's fake timers (installed later) must not hold back the events
 * and completions of firings, as they never held back the microtasks these used before.
 */
const nextTurn = globalThis.setImmediate;

export function afterThisInstant(work: () => void): void {
  afterThisInstantCall(work, undefined, undefined, undefined, undefined);
}

/** afterThisInstant(() => work(a, b, c, d)), without the closure; in order with the other work. */
export function afterThisInstantCall<A, B, C, D>(work: (a: A, b: B, c: C, d: D) => void, a: A, b: B, c: C, d: D): void {
  const at = queued;
  queue[at] = work;
  queue[at + 1] = a;
  queue[at + 2] = b;
  queue[at + 3] = c;
  queue[at + 4] = d;
  queued = at + SLOTS;
  if (at === 0) nextTurn(runQueued);
}

/**
 * The promise the callers of untilAfterThisInstant share until the queue runs: it resolves after the whole batch, which
 * runs in one macrotask before any awaiting code resumes, so one promise a batch means the same as one a caller (a
 * thousand firings of an instant each made a promise and its closures, issue 43).
 */
let batchOver: Promise<void> | undefined;

/** Resolves after the work queued so far (and the other timers and I/O callbacks of this pass) has run. */
export function untilAfterThisInstant(): Promise<void> {
  return (batchOver ??= new Promise((resolve) => afterThisInstant(resolve)));
}

function runQueued(): void {
  const work = queue;
  const count = queued;
  // Work queued while this runs goes to the other array, and runs in a pass of its own.
  queue = spare;
  queued = 0;
  // Callers from here on wait for the next batch.
  batchOver = undefined;
  for (let at = 0; at < count; at += SLOTS) {
    try {
      (work[at] as (a: unknown, b: unknown, c: unknown, d: unknown) => void)(
        work[at + 1],
        work[at + 2],
        work[at + 3],
        work[at + 4],
      );
    } catch (error) {
      // Every caller catches its own failures; one that does not must not drop the rest of the batch.
      new Logger('ElasticJob').error(`deferred work failed: ${String(error)}`);
    }
  }
  // Emptied for its next turn, its size kept: nothing it held is kept alive.
  work.fill(undefined, 0, count);
  spare = work;
}

/**
 * Resolves at `at` (ms since the epoch), or a little before as timers may: one timer and one promise for every caller
 * waiting for the same instant (a thousand firings prepared ahead of their cron instant, issue 43). Callers check the
 * clock and wait again if early.
 */
export function untilInstant(at: number): Promise<void> {
  const found = instants.get(at);
  // Made under the timers in place now (a test's fake timers come and go): a wait on other timers is not shared.
  if (found !== undefined && found.timers === setTimeout) return found.wait;
  const timers = setTimeout;
  const wait = new Promise<void>((resolve) =>
    timers(() => {
      if (instants.get(at)?.wait === wait) instants.delete(at);
      resolve();
    }, at - Date.now()),
  );
  instants.set(at, { wait, timers });
  return wait;
}
const instants = new Map<number, { wait: Promise<void>; timers: typeof setTimeout }>();
