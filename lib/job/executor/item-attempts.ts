import { flatRandomUUID } from '../../util/uuid.js';
import { describeError, ItemTimeoutError } from '../../errors/elastic-job.errors.js';
import type { ItemProgress, ShardingContext } from '../../interfaces/sharding-context.interface.js';
import type { JobContext } from '../context/job-context.js';
import type { FiringSource } from '../events/firing-state.js';
import { retryDelay } from '../policies/backoff.js';
import type { ItemPolicies } from '../policies/item-policies.js';
import { checkedProgress, ItemLogger, type ItemLineBook } from '../policies/item-lines.js';
import type { FiringReport } from './firing-report.js';

/**
 * An abort signal, made when first read: an AbortController costs tens of microseconds, which a thousand items starting
 * at one instant would pay before the last one starts (most items never read it).
 */
export class LazyAbort {
  private controller: AbortController | undefined;
  private reason: Error | undefined;

  get signal(): AbortSignal {
    if (this.controller) return this.controller.signal;
    this.controller = new AbortController();
    if (this.reason) this.controller.abort(this.reason);
    return this.controller.signal;
  }

  abort(reason: Error): void {
    if (this.controller) this.controller.abort(reason);
    else this.reason ??= reason;
  }
}

/**
 * One item of a firing while it runs here, through its attempts: the current attempt's signal, the item's own abort
 * (session lost, shutdown, an operator's halt, a covering firing: no attempt starts after it), its latest progress.
 */
export class RunningItem {
  attempt = new LazyAbort();
  /** Why the item was aborted, once it was. */
  aborted: Error | undefined;
  /** Set on an abort that must not wait for the item's code (a covering firing): the attempt is given up at once. */
  abandon: ((reason: Error) => void) | undefined;
  /** Wakes a backoff wait. */
  wake: (() => void) | undefined;
  progress: { value: ItemProgress; at: number } | undefined;

  abort(reason: Error, giveUp = false): void {
    this.aborted ??= reason;
    this.attempt.abort(reason);
    if (giveUp) this.abandon?.(reason);
    this.wake?.();
  }
}

/** What runs one attempt (the interceptors, then the job type's executor). */
export type AttemptRunner = (context: ShardingContext) => Promise<unknown>;

export interface ItemFiring {
  source: FiringSource;
  taskId: string;
  scheduledAt: number | undefined;
}

/**
 * An item's attempts under the job's item policies (docs/guide/item-policies.md): each attempt an item-started and an
 * item-completed event (with its attempt number when the job retries) and its own execution id; at
 * `itemTimeoutMilliseconds` the attempt's signal aborts with an ItemTimeoutError and the attempt fails at once, its
 * code left to settle on its own (Node cannot stop it: a late settling is logged); a failed attempt runs again after
 * its backoff unless `mayRetry()` says why not. Resolves with the last failure, or undefined on success.
 */
export function runAttempts(
  ctx: JobContext,
  report: FiringReport,
  policies: ItemPolicies,
  lineBook: ItemLineBook | undefined,
  base: Omit<ShardingContext, 'signal' | 'attempt' | 'logger' | 'reportProgress'>,
  running: RunningItem,
  firing: ItemFiring,
  runAttempt: AttemptRunner,
  /** Why the item may not run again, asked with its number (no closure per item). */
  mayRetry: (item: number) => string | undefined,
): Promise<ItemFailure | undefined> {
  if (policies.retry !== undefined || policies.timeoutMs > 0 || policies.overlap === 'cover-early')
    return attemptsUnderPolicies(ctx, report, policies, lineBook, base, running, firing, runAttempt, mayRetry);
  // One attempt that nothing cuts (the default policies): its promise and one then(), without an async frame (~500
  // bytes of each item start in a burst, issue 43). The same steps as attemptsUnderPolicies' first attempt.
  const executionId = lineBook === undefined ? undefined : flatRandomUUID();
  const context = attemptContext(ctx, base, running, 1, lineBook, executionId);
  const started = report.itemStarted(firing.source, firing.taskId, base.shardingItem, firing.scheduledAt, executionId);
  let attempt: Promise<unknown>;
  try {
    attempt = runAttempt(context);
  } catch (error) {
    attempt = Promise.reject(error as Error);
  }
  return attempt.then(
    () => {
      endAttempt(context);
      report.itemCompleted(started, undefined);
      return undefined;
    },
    (failure: unknown) => {
      endAttempt(context);
      report.itemCompleted(started, { cause: failure });
      return { failure, context };
    },
  );
}

/** An item's last failure, with the context of its last attempt (for the job's error handler). */
export interface ItemFailure {
  failure: unknown;
  context: ShardingContext;
}

/** runAttempts under a retry, a timeout or cover-early. */
async function attemptsUnderPolicies(
  ctx: JobContext,
  report: FiringReport,
  policies: ItemPolicies,
  lineBook: ItemLineBook | undefined,
  base: Omit<ShardingContext, 'signal' | 'attempt' | 'logger' | 'reportProgress'>,
  running: RunningItem,
  firing: ItemFiring,
  runAttempt: AttemptRunner,
  mayRetry: (item: number) => string | undefined,
): Promise<ItemFailure | undefined> {
  const attempts = policies.retry?.attempts ?? 1;
  for (let attempt = 1; ; attempt++) {
    // The execution's id, which its kept lines are filed under: made here only when lines can be kept (else the event
    // publisher makes one, when anybody listens).
    const executionId = lineBook === undefined ? undefined : flatRandomUUID();
    const context = attemptContext(ctx, base, running, attempt, lineBook, executionId);
    const started = report.itemStarted(
      firing.source,
      firing.taskId,
      base.shardingItem,
      firing.scheduledAt,
      executionId,
      policies.retry ? attempt : undefined,
    );
    let failure: unknown;
    let failed = false;
    try {
      // Raced against a cut only when something may cut it (a promise and a race per item cost a busy instant).
      if (policies.timeoutMs > 0 || policies.overlap === 'cover-early')
        await attemptWithin(ctx, context, running, policies.timeoutMs, runAttempt);
      else await runAttempt(context);
    } catch (error) {
      failed = true;
      failure = error;
    }
    endAttempt(context);
    report.itemCompleted(started, failed ? { cause: failure } : undefined);
    if (!failed) return undefined;
    if (attempt >= attempts) return { failure, context };
    const refused = running.aborted ? describeError(running.aborted) : mayRetry(base.shardingItem);
    if (refused !== undefined) {
      ctx.logger.warn(`item ${base.shardingItem} not retried (attempt ${attempt} of ${attempts} failed): ${refused}`);
      return { failure, context };
    }
    const delay = retryDelay(policies.retry!, attempt + 1);
    ctx.logger.warn(
      `item ${base.shardingItem} failed (attempt ${attempt} of ${attempts}): ${describeError(failure)}; ` +
        `retrying in ${delay} ms`,
    );
    await backoff(running, delay);
    const refusedNow = running.aborted ? describeError(running.aborted) : mayRetry(base.shardingItem);
    if (refusedNow !== undefined) {
      ctx.logger.warn(`item ${base.shardingItem} not retried: ${refusedNow}`);
      return { failure, context };
    }
    running.attempt = new LazyAbort();
  }
}

/**
 * Waits at least `delay` ms of wall clock, or until woken. A timer alone may come a millisecond early by the clock:
 * Node counts it from the event loop's cached time, taken when this loop iteration began, not from now.
 */
function backoff(running: RunningItem, delay: number): Promise<void> {
  const until = Date.now() + delay;
  return new Promise((resolve) => {
    let timer = setTimeout(check, delay);
    function check(): void {
      const left = until - Date.now();
      if (left > 0) timer = setTimeout(check, left);
      else done();
    }
    function done(): void {
      clearTimeout(timer);
      running.wake = undefined;
      resolve();
    }
    running.wake = done;
  });
}

/** Where an attempt's context keeps what its accessors read (a non-enumerable own property: never spread). */
const ATTEMPT = Symbol('elastic-job attempt');

/** What an attempt's `signal` and `logger` accessors read. */
class AttemptState {
  logger: ItemLogger | undefined;
  constructor(
    readonly ctx: JobContext,
    readonly abort: LazyAbort,
    readonly shardingItem: number,
    readonly lineBook: ItemLineBook | undefined,
    readonly executionId: string | undefined,
  ) {}
}

type StatefulContext = ShardingContext & { readonly [ATTEMPT]: AttemptState };

/**
 * The accessors every attempt's context shares, reading its state through `this`: own, enumerable and read-only as
 * an object literal's getters are, but without a closure and an accessor pair each, which left every context in
 * dictionary mode (about 1.2 KB and 17 µs each against 0.3 KB and under 5 µs; a thousand jobs' items at one instant).
 */
const SIGNAL: PropertyDescriptor = {
  get(this: StatefulContext): AbortSignal {
    return this[ATTEMPT].abort.signal;
  },
  enumerable: true,
  configurable: true,
};
const LOGGER: PropertyDescriptor = {
  get(this: StatefulContext): ItemLogger {
    const state = this[ATTEMPT];
    if (state.logger === undefined) {
      state.logger = new ItemLogger(state.ctx.logger, state.shardingItem);
      if (state.executionId !== undefined) state.lineBook?.keepLines(state.executionId, state.logger.kept);
    }
    return state.logger;
  },
  enumerable: true,
  configurable: true,
};

/**
 * The attempt's context: the item's fields, its attempt number, then its signal and its logger (made when first
 * read) as accessors, and reportProgress (a closure: it may be called detached from the context). The same own
 * properties, in the same order, as the object literal it was.
 */
export function attemptContext(
  ctx: JobContext,
  base: Omit<ShardingContext, 'signal' | 'attempt' | 'logger' | 'reportProgress'>,
  running: RunningItem,
  attempt: number,
  lineBook: ItemLineBook | undefined,
  executionId: string | undefined,
): ShardingContext {
  const context = {
    jobName: base.jobName,
    taskId: base.taskId,
    shardingTotalCount: base.shardingTotalCount,
    jobParameter: base.jobParameter,
    shardingItem: base.shardingItem,
    shardingParameter: base.shardingParameter,
    attempt,
  } as ShardingContext;
  Object.defineProperty(context, ATTEMPT, {
    value: new AttemptState(ctx, running.attempt, base.shardingItem, lineBook, executionId),
  });
  Object.defineProperty(context, 'signal', SIGNAL);
  Object.defineProperty(context, 'logger', LOGGER);
  context.reportProgress = (progress: ItemProgress): void => {
    running.progress = { value: checkedProgress(progress), at: Date.now() };
  };
  return context;
}

/** At the attempt's end its kept lines are compacted (kept-lines.ts), before the tracing writer reads them. */
export function endAttempt(context: ShardingContext): void {
  (context as StatefulContext)[ATTEMPT].logger?.end();
}

/**
 * One attempt, given up at once at its timeout (its signal aborted with an ItemTimeoutError) or when a covering firing
 * abandons it; the attempt's own promise is then left to settle, and a late settling is logged.
 */
async function attemptWithin(
  ctx: JobContext,
  context: ShardingContext,
  running: RunningItem,
  timeoutMs: number,
  runAttempt: AttemptRunner,
): Promise<unknown> {
  const attempt = runAttempt(context);
  let timer: NodeJS.Timeout | undefined;
  let givenUp: Error | undefined;
  const cut = new Promise<never>((_, reject) => {
    const giveUp = (reason: Error): void => {
      givenUp = reason;
      reject(reason);
    };
    running.abandon = giveUp;
    if (timeoutMs > 0)
      timer = setTimeout(() => {
        const reason = new ItemTimeoutError(ctx.jobName, context.shardingItem, timeoutMs);
        running.attempt.abort(reason);
        giveUp(reason);
      }, timeoutMs);
  });
  cut.catch(() => undefined);
  try {
    return await Promise.race([attempt, cut]);
  } finally {
    clearTimeout(timer);
    running.abandon = undefined;
    if (givenUp !== undefined) {
      const at = Date.now();
      const late = (how: string) => () =>
        ctx.logger.warn(
          `item ${context.shardingItem} ${how} ${Date.now() - at} ms after it was given up (${givenUp!.message}): ` +
            'its code ignores its signal; make it watch context.signal',
        );
      attempt.then(late('completed'), late('failed'));
    }
  }
}
