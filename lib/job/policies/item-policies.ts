import { JobConfigurationError } from '../../errors/elastic-job.errors.js';
import type { ItemRetryOptions, ShardedJobOptions } from '../../interfaces/sharded-job-options.interface.js';

/**
 * The item policies of a job (docs/guide/item-policies.md): a timeout, retries with backoff, what a firing does to
 * items still running. Stored in the config node's `props` map under `item.*` names, the one place Java ElasticJob
 * 3.0.5 keeps and ignores for a class job (its YAML loader refuses unknown top-level keys: docs/interop-java.md), so a
 * Java instance still loads the job, runs its own items without these policies, and every surface that edits `props`
 * (updateJobConfiguration, the CLI's `config --set props=...`, the console's editor) edits them.
 */
export interface ItemPolicies {
  /** 0: none. */
  timeoutMs: number;
  retry: ItemRetryPolicy | undefined;
  overlap: 'misfire' | 'cover-early';
}

export interface ItemRetryPolicy {
  /** Every run of the item, the first included (BullMQ's count); >= 2 here (1 is no retry: no policy). */
  attempts: number;
  backoff: 'fixed' | 'exponential';
  delayMs: number;
  /** 0: no cap. */
  maxDelayMs: number;
  /** 0..1: the delay is drawn in [delay × (1 − jitter), delay]. */
  jitter: number;
}

/** The `props` names, one per setting. */
export const ITEM_POLICY_PROPS = {
  timeout: 'item.timeout.milliseconds',
  attempts: 'item.retry.attempts',
  backoff: 'item.retry.backoff',
  delay: 'item.retry.delay.milliseconds',
  maxDelay: 'item.retry.max.delay.milliseconds',
  jitter: 'item.retry.jitter',
  overlap: 'item.overlap',
} as const;

const PREFIX = 'item.';
const KNOWN: ReadonlySet<string> = new Set(Object.values(ITEM_POLICY_PROPS));
/** Longest delay or timeout: a day would do; this is setTimeout's own limit (2^31 − 1 ms, about 24.8 days). */
export const MAX_POLICY_MILLISECONDS = 2_147_483_647;
/** Most attempts of one item in one firing. */
export const MAX_ATTEMPTS = 100;
const BACKOFFS = ['fixed', 'exponential'] as const;
const OVERLAPS = ['misfire', 'cover-early'] as const;

export const NO_ITEM_POLICIES: ItemPolicies = Object.freeze({ timeoutMs: 0, retry: undefined, overlap: 'misfire' });

function fail(jobName: string, field: string, detail: string): never {
  throw new JobConfigurationError(jobName, field, detail);
}

/** A whole number of milliseconds (or attempts) in [min, max], from an option's number or a property's text. */
function integerOf(jobName: string, field: string, value: unknown, min: number, max: number): number {
  // A property's text is read as a number; an option must be one (`field` names a prop when it starts so).
  const text = field.startsWith('props.') && typeof value === 'string';
  const number = text && /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : value;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < min || number > max)
    fail(jobName, field, `must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return number;
}

function fractionOf(jobName: string, field: string, value: unknown): number {
  const text = field.startsWith('props.') && typeof value === 'string';
  const number = text && value.trim() !== '' ? Number(value.trim()) : value;
  if (typeof number !== 'number' || !Number.isFinite(number) || number < 0 || number > 1)
    fail(
      jobName,
      field,
      `must be a number from 0 to 1 (the share of the delay drawn at random), got ${JSON.stringify(value)}`,
    );
  return number;
}

function oneOf<T extends string>(jobName: string, field: string, value: unknown, kinds: readonly T[]): T {
  if (typeof value !== 'string' || !(kinds as readonly string[]).includes(value))
    fail(jobName, field, `must be one of ${kinds.map((kind) => `'${kind}'`).join(', ')}, got ${JSON.stringify(value)}`);
  return value as T;
}

/**
 * The item policies of `props`, checked: a value out of range, of the wrong kind, or an `item.` name this library does
 * not know is a JobConfigurationError naming `props.{name}`. Pure; undefined when props hold none.
 */
export function itemPoliciesOf(jobName: string, props: Readonly<Record<string, string>>): ItemPolicies | undefined {
  let found = false;
  for (const name of Object.keys(props)) {
    if (!name.startsWith(PREFIX)) continue;
    if (!KNOWN.has(name)) fail(jobName, `props.${name}`, `is no item policy; the names are ${[...KNOWN].join(', ')}`);
    found = true;
  }
  if (!found) return undefined;
  const field = (name: string): string => `props.${name}`;
  const raw = (name: string): string | undefined => props[name];
  const P = ITEM_POLICY_PROPS;
  const timeoutMs =
    raw(P.timeout) === undefined ? 0 : integerOf(jobName, field(P.timeout), raw(P.timeout), 0, MAX_POLICY_MILLISECONDS);
  const overlap = raw(P.overlap) === undefined ? 'misfire' : oneOf(jobName, field(P.overlap), raw(P.overlap), OVERLAPS);
  const attempts =
    raw(P.attempts) === undefined ? 1 : integerOf(jobName, field(P.attempts), raw(P.attempts), 1, MAX_ATTEMPTS);
  const backoff = raw(P.backoff) === undefined ? 'fixed' : oneOf(jobName, field(P.backoff), raw(P.backoff), BACKOFFS);
  const delayMs =
    raw(P.delay) === undefined ? 0 : integerOf(jobName, field(P.delay), raw(P.delay), 0, MAX_POLICY_MILLISECONDS);
  const maxDelayMs =
    raw(P.maxDelay) === undefined
      ? 0
      : integerOf(jobName, field(P.maxDelay), raw(P.maxDelay), 0, MAX_POLICY_MILLISECONDS);
  const jitter = raw(P.jitter) === undefined ? 0 : fractionOf(jobName, field(P.jitter), raw(P.jitter));
  if (maxDelayMs > 0 && maxDelayMs < delayMs)
    fail(
      jobName,
      field(P.maxDelay),
      `(${maxDelayMs}) is below the first delay (${delayMs}): raise it, or use 0 (no cap)`,
    );
  return {
    timeoutMs,
    retry: attempts > 1 ? { attempts, backoff, delayMs, maxDelayMs, jitter } : undefined,
    overlap,
  };
}

/** The policies a JobConfiguration's props give (checked when the configuration was made), cached by props object. */
const cache = new WeakMap<object, ItemPolicies>();
export function itemPolicies(jobName: string, props: Readonly<Record<string, string>>): ItemPolicies {
  let policies = cache.get(props);
  if (policies === undefined) {
    policies = itemPoliciesOf(jobName, props) ?? NO_ITEM_POLICIES;
    cache.set(props, policies);
  }
  return policies;
}

/**
 * `@ShardedJob()`'s typed policy options (`itemTimeoutMilliseconds`, `retry`, `overlap`) as the `props` they are stored
 * in, checked, merged over `props` (an option and the same setting in `props` at once is refused: say it once).
 */
export function withPolicyProps(
  options: ShardedJobOptions,
  props: Readonly<Record<string, string>>,
): Readonly<Record<string, string>> {
  const { jobName } = options;
  const added: Record<string, string> = {};
  const P = ITEM_POLICY_PROPS;
  if (options.itemTimeoutMilliseconds !== undefined)
    added[P.timeout] = String(
      integerOf(jobName, 'itemTimeoutMilliseconds', options.itemTimeoutMilliseconds, 0, MAX_POLICY_MILLISECONDS),
    );
  if (options.overlap !== undefined) added[P.overlap] = oneOf(jobName, 'overlap', options.overlap, OVERLAPS);
  if (options.retry !== undefined) Object.assign(added, retryProps(jobName, options.retry));
  for (const name of Object.keys(added))
    if (props[name] !== undefined)
      fail(jobName, `props.${name}`, 'is also given as an option of @ShardedJob(): give it once, either way');
  if (Object.keys(added).length === 0) return props;
  const merged = { ...props, ...added };
  return Object.fromEntries(Object.entries(merged).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function retryProps(jobName: string, retry: ItemRetryOptions): Record<string, string> {
  if (typeof retry !== 'object' || retry === null || Array.isArray(retry))
    fail(
      jobName,
      'retry',
      `must be an object such as { attempts: 3, backoff: 'exponential', delayMilliseconds: 1000 }, got ${JSON.stringify(retry)}`,
    );
  const known = ['attempts', 'backoff', 'delayMilliseconds', 'maxDelayMilliseconds', 'jitter'];
  for (const key of Object.keys(retry))
    if (!known.includes(key)) fail(jobName, `retry.${key}`, `is no retry setting; they are ${known.join(', ')}`);
  const P = ITEM_POLICY_PROPS;
  const props: Record<string, string> = {
    [P.attempts]: String(integerOf(jobName, 'retry.attempts', retry.attempts, 1, MAX_ATTEMPTS)),
  };
  if (retry.backoff !== undefined) props[P.backoff] = oneOf(jobName, 'retry.backoff', retry.backoff, BACKOFFS);
  if (retry.delayMilliseconds !== undefined)
    props[P.delay] = String(
      integerOf(jobName, 'retry.delayMilliseconds', retry.delayMilliseconds, 0, MAX_POLICY_MILLISECONDS),
    );
  if (retry.maxDelayMilliseconds !== undefined)
    props[P.maxDelay] = String(
      integerOf(jobName, 'retry.maxDelayMilliseconds', retry.maxDelayMilliseconds, 0, MAX_POLICY_MILLISECONDS),
    );
  if (retry.jitter !== undefined) props[P.jitter] = String(fractionOf(jobName, 'retry.jitter', retry.jitter));
  const [delay, cap] = [Number(props[P.delay] ?? 0), Number(props[P.maxDelay] ?? 0)];
  if (cap > 0 && cap < delay)
    fail(
      jobName,
      'retry.maxDelayMilliseconds',
      `(${cap}) is below the first delay (${delay}): raise it, or use 0 (no cap)`,
    );
  return props;
}
