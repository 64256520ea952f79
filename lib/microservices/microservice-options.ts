/** The prefix of the patterns answered and of the events emitted, unless the app gives its own. */
export const DEFAULT_PREFIX = 'elastic-job';

/** Node's timers fire at once beyond this (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Why `value` cannot be a timer's duration in ms, or undefined when it can (or is not given). */
export function positiveTimer(value: number | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value <= 0 || value > MAX_TIMER_MS)
    return `must be an integer from 1 to ${MAX_TIMER_MS}, got ${JSON.stringify(value)}`;
  return undefined;
}
