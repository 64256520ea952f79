import type { ItemRetryPolicy } from './item-policies.js';

/**
 * The wait before attempt `next` (2 for the first retry), as BullMQ's backoff strategies compute it: `fixed` waits the
 * delay each time, `exponential` doubles it from the first retry (delay × 2^(next − 2)); capped by `maxDelayMs` when
 * given; then `jitter` draws it in [wait × (1 − jitter), wait].
 */
export function retryDelay(policy: ItemRetryPolicy, next: number, random: () => number = Math.random): number {
  const exponent = Math.max(0, next - 2);
  let wait = policy.backoff === 'exponential' ? policy.delayMs * 2 ** exponent : policy.delayMs;
  if (policy.maxDelayMs > 0) wait = Math.min(wait, policy.maxDelayMs);
  if (!Number.isFinite(wait)) wait = policy.maxDelayMs > 0 ? policy.maxDelayMs : 2_147_483_647;
  wait = Math.min(wait, 2_147_483_647);
  if (policy.jitter > 0) wait = wait * (1 - policy.jitter * random());
  return Math.round(wait);
}
