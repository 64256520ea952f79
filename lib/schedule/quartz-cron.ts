import { BoundedMemo } from '../util/bounded-memo.js';

/**
 * The cron stored in a job's config node is read by Java ElasticJob instances with Quartz, so it is written in
 * Quartz's dialect and read with Quartz's meaning (docs/reference/elasticjob.md: the config node's `cron`). The two
 * dialects differ in three ways that matter (Quartz `CronExpression` javadoc):
 * - Quartz needs `?` in exactly one of day-of-month and day-of-week; cron-parser reads `?` as `*`, and when both
 *   days are restricted it fires when either matches, which Quartz cannot express: such a cron is refused.
 * - Day-of-week numbers: Quartz 1 = Sunday .. 7 = Saturday; cron-parser 0 (or 7) = Sunday .. 6 = Saturday. Plain
 *   days are written as names (SUN..SAT), which mean the same in both; `L` and `#` keep numbers, translated.
 * - Quartz has an optional year field: only `*` is accepted.
 * Everything else (seconds, minutes, hours, day-of-month with `L`, months, `/` steps, ranges, names) is the same.
 */

const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;

/** Seconds, minutes, hours, day-of-month, month, day-of-week. */
type SixFields = [string, string, string, string, string, string];

/** Thrown with a message saying what cannot be translated and what to write instead. */
export class CronDialectError extends Error {}

/**
 * Translations already made, each way (pure functions of the text): a job's config node is written and read back at
 * every start, its cron translated each time, and most jobs of an app share a few crons (issue 43: a start of 1000
 * jobs translated 4000 times). Only successful translations are kept; bounded: cleared when full.
 */
const toQuartz = new BoundedMemo<string>();
const fromQuartz = new BoundedMemo<string>();

type Numbering = 'cron-parser' | 'quartz';

/** Day index 0 (Sunday) .. 6 of a day-of-week value in the given numbering, or of a name. */
function dayIndex(value: string, numbering: Numbering, cron: string): number {
  const name = DAY_NAMES.indexOf(value.toUpperCase() as (typeof DAY_NAMES)[number]);
  if (name >= 0) return name;
  if (!/^\d+$/.test(value)) throw new CronDialectError(`'${cron}': '${value}' is not a day of the week`);
  const n = Number(value);
  if (numbering === 'quartz') {
    if (n < 1 || n > 7) throw new CronDialectError(`'${cron}': day-of-week ${n} is outside Quartz's 1..7`);
    return n - 1;
  }
  if (n > 7) throw new CronDialectError(`'${cron}': day-of-week ${n} is outside 0..7`);
  return n % 7;
}

/**
 * The day-of-week field in the other numbering: plain days (lists, ranges, steps) as a list of names, `nL` and
 * `n#k` with the number translated; '*' stays '*'.
 */
function translateDays(field: string, from: Numbering, cron: string): string {
  if (field === '*') return '*';
  const to = (index: number): string => String(from === 'quartz' ? index : index + 1);
  const days = new Set<number>();
  const special: string[] = [];
  for (const token of field.split(',')) {
    const last = /^(\w+)L$/i.exec(token);
    const nth = /^(\w+)#([1-5])$/.exec(token);
    if (token.toUpperCase() === 'L' && from === 'quartz')
      days.add(6); // Quartz: 'L' alone = the last day, Saturday
    else if (last) special.push(`${to(dayIndex(last[1]!, from, cron))}L`);
    else if (nth) special.push(`${to(dayIndex(nth[1]!, from, cron))}#${nth[2]}`);
    else for (const day of expandDays(token, from, cron)) days.add(day);
  }
  // Quartz reads one 'nL' or 'n#k' alone in the field, never in a list ("not implemented" in CronExpression).
  if (special.length > 1 || (special.length === 1 && days.size > 0)) {
    throw new CronDialectError(
      `'${cron}': '${field}' mixes a last or nth weekday with other days, which Quartz cannot read`,
    );
  }
  const names = [...days].sort((a, b) => a - b).map((day) => DAY_NAMES[day]!);
  return [...names, ...special].join(',');
}

/** The days (0 = Sunday) a plain token names: `a`, `a-b`, `*`/`a`/`a-b` with `/step`, numbers or names. */
function expandDays(token: string, numbering: Numbering, cron: string): number[] {
  const match = /^(\*|\w+)(?:-(\w+))?(?:\/(\d+))?$/.exec(token);
  if (!match) throw new CronDialectError(`'${cron}': '${token}' is not a day-of-week expression both dialects read`);
  const [, startText, endText, stepText] = match;
  const first = numbering === 'quartz' ? 1 : 0;
  // cron-parser runs an open step to 7 (Sunday again): 1/2 is MON,WED,FRI,SUN there.
  const lastValue = 7;
  // Values in the token's own numbering (cron-parser 0..7, Quartz 1..7); names mean the same day in both.
  const value = (text: string): number => {
    const name = DAY_NAMES.indexOf(text.toUpperCase() as (typeof DAY_NAMES)[number]);
    if (name >= 0) return name + first;
    dayIndex(text, numbering, cron); // checks the number's range
    return Number(text);
  };
  const start = startText === '*' ? first : value(startText!);
  const end = endText !== undefined ? value(endText) : startText === '*' || stepText !== undefined ? lastValue : start;
  const step = stepText === undefined ? 1 : Number(stepText);
  if (step < 1) throw new CronDialectError(`'${cron}': a step of ${step} in day-of-week`);
  const days: number[] = [];
  // A range that wraps (FRI-MON) goes round the week, as both Quartz and cron-parser read it.
  const span = end >= start ? end - start : end + 7 - start;
  for (let offset = 0; offset <= span; offset += step) {
    const raw = start + offset;
    days.push(numbering === 'quartz' ? (raw - 1) % 7 : raw % 7);
  }
  return days;
}

/**
 * A cron in this library's dialect (normalized: 6 fields, no `?`) written in Quartz's, as ElasticJob stores it.
 * Throws CronDialectError for what Quartz cannot express the same way.
 */
export function toQuartzCron(cron: string): string {
  return toQuartz.get(cron, () => translateToQuartz(cron));
}

function translateToQuartz(cron: string): string {
  const fields = cron.trim().split(/\s+/);
  if (fields.length === 5) fields.unshift('0');
  // cron-parser's 'H' picks a random value per parse (instances would disagree), and Quartz has none.
  if (fields.some((field) => field.split(/[,\-/]/).some((token) => /^H(\(|$)/i.test(token)))) {
    throw new CronDialectError(`'${cron}': 'H' (a hashed value) cannot be stored for Java instances; write the value`);
  }
  if (fields.length !== 6) throw new CronDialectError(`'${cron}' must have 5 or 6 fields`);
  const [seconds, minutes, hours, dayOfMonth, month, dayOfWeek] = fields as SixFields;
  if (dayOfMonth !== '*' && dayOfWeek !== '*') {
    throw new CronDialectError(
      `'${cron}' restricts both day-of-month and day-of-week: it fires when either matches here, which Quartz ` +
        `(and so a Java ElasticJob instance) cannot express; restrict one and leave the other '*'`,
    );
  }
  checkQuartzSteps([seconds, minutes, hours, dayOfMonth, month], cron);
  if (dayOfMonth.includes('L') && dayOfMonth !== 'L') {
    throw new CronDialectError(`'${cron}': day-of-month '${dayOfMonth}': Quartz reads 'L' only alone there`);
  }
  const days = dayOfWeek === '*' ? '?' : translateDays(dayOfWeek, 'cron-parser', cron);
  return [seconds, minutes, hours, dayOfWeek === '*' ? dayOfMonth : '?', monthNumbers(month), days].join(' ');
}

/**
 * A stored cron read with the meaning its writer gave it: with a `?` it is Quartz's (ElasticJob, its console, this
 * library), translated into this library's dialect; without one Quartz would refuse it, so it was written for this
 * library (an earlier version, or by hand) and is taken as it is.
 */
export function fromQuartzCron(stored: string): string {
  return fromQuartz.get(stored, () => translateFromQuartz(stored));
}

function translateFromQuartz(stored: string): string {
  const fields = stored.trim().split(/\s+/);
  if (!fields.includes('?')) return stored.trim();
  if (fields.length === 7) {
    if (fields[6] !== '*')
      throw new CronDialectError(`'${stored}' has a Quartz year field; only '*' is supported there`);
    fields.pop();
  }
  if (fields.length !== 6) throw new CronDialectError(`'${stored}' must have 6 or 7 fields as a Quartz cron`);
  const [seconds, minutes, hours, dayOfMonth, month, dayOfWeek] = fields as SixFields;
  // Quartz ignores a step after a name (JAN/3 is January, MON-FRI/2 is Monday to Friday): read it so.
  const withoutNamedStep = (field: string): string =>
    field
      .split(',')
      .map((token) => token.replace(/^([A-Z]{3}(?:-[A-Z]{3})?)\/\d+$/i, '$1'))
      .join(',');
  const days = dayOfWeek === '?' ? '*' : translateDays(withoutNamedStep(dayOfWeek), 'quartz', stored);
  return [
    unwrapRanges(seconds, 0, 59),
    unwrapRanges(minutes, 0, 59),
    unwrapRanges(hours, 0, 23),
    dayOfMonth === '?' ? '*' : unwrapRanges(dayOfMonth, 1, 31),
    unwrapRanges(monthNumbers(withoutNamedStep(month)), 1, 12),
    days,
  ].join(' ');
}

const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];

/**
 * Month names as numbers (1 = January in both): Quartz refuses a name mixed with a number, and ignores a step after a
 * name.
 */
function monthNumbers(field: string): string {
  return field.replace(/[A-Z]{3}/gi, (name) => {
    const index = MONTH_NAMES.indexOf(name.toUpperCase());
    return index < 0 ? name : String(index + 1);
  });
}

/** Quartz refuses an increment beyond its field's range (CronExpression: 59, 59, 23, 31, 12). */
function checkQuartzSteps(fields: readonly string[], cron: string): void {
  const limits = [59, 59, 23, 31, 12];
  const names = ['seconds', 'minutes', 'hours', 'day-of-month', 'month'];
  fields.forEach((field, index) => {
    for (const step of field.matchAll(/\/(\d+)/g)) {
      if (Number(step[1]) > limits[index]!) {
        throw new CronDialectError(
          `'${cron}': a step of ${step[1]} in ${names[index]} is more than Quartz allows (${limits[index]})`,
        );
      }
    }
  });
}

/**
 * Quartz reads a range whose end is below its start as wrapping round (hours 22-2: 22, 23, 0, 1, 2); cron-parser
 * refuses it. Such ranges are written out as lists, steps included; everything else is left as it is.
 */
function unwrapRanges(field: string, min: number, max: number): string {
  return field
    .split(',')
    .map((token) => {
      const range = /^(\d+)-(\d+)(?:\/(\d+))?$/.exec(token);
      if (!range || Number(range[1]) <= Number(range[2])) return token;
      const [start, end, step] = [Number(range[1]), Number(range[2]), Number(range[3] ?? '1')];
      const size = max - min + 1;
      const values: number[] = [];
      for (let offset = 0; offset <= end + size - start; offset += step) {
        values.push(((start + offset - min) % size) + min);
      }
      return values.join(',');
    })
    .join(',');
}
