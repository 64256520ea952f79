import { CronExpressionParser } from 'cron-parser';
import { CronExpressionError } from '../errors/elastic-job.errors.js';
import { expandCronPreset, normalizeCron, validateCron, validateTimeZone } from './cron-expression.js';
import { CronDialectError, fromQuartzCron, toQuartzCron } from './quartz-cron.js';

/**
 * Next fire times, shown where a cron is checked: a cron that parses can still mean something else than its
 * writer thought (a Quartz habit such as `? * 2`, Monday there and Tuesday here; a time inside a skipped DST hour),
 * and the instants it fires at, with their weekday in the job's zone, say so at a glance.
 */

export interface CronDescription {
  /** The expression as this library reads it (presets written out, `?` kept where Quartz needs it). */
  readonly cron: string;
  /** As stored in the config node, in Quartz's dialect (what a Java instance or ElasticJob's console shows). */
  readonly quartz: string;
  readonly timeZone: string | undefined;
  /** The next fire times strictly after `from`, at most `count`. */
  readonly nextFireTimes: readonly Date[];
}

export interface DescribeCronOptions {
  /** An IANA zone, as a job's `timeZone`; default the process's. */
  readonly timeZone?: string;
  /** How many fire times; default 5, at most 100. */
  readonly count?: number;
  /** Fire times after this instant; default now. */
  readonly from?: Date;
}

/**
 * What a cron means here: the form stored for Java instances and its next fire times. Throws a
 * `CronExpressionError` with the message a job's validation gives (the same checks as `@ShardedJob({ cron })`).
 */
export function describeCron(cron: string, options: DescribeCronOptions = {}): CronDescription {
  const { timeZone, count = 5, from = new Date() } = options;
  if (!Number.isInteger(count) || count < 1 || count > 100)
    throw new CronExpressionError(cron, `count must be an integer 1..100, got ${JSON.stringify(count)}`);
  const zoneError = validateTimeZone(timeZone);
  if (zoneError) throw new CronExpressionError(cron, `timeZone ${zoneError}`);
  const error = validateCron(expandCronPreset(cron), timeZone);
  if (error) throw new CronExpressionError(cron, error);
  let quartz: string;
  try {
    quartz = toQuartzCron(normalizeCron(cron));
  } catch (dialectError) {
    if (!(dialectError instanceof CronDialectError)) throw dialectError;
    throw new CronExpressionError(cron, withFireTimes(dialectError.message, cron, timeZone));
  }
  const kept = fromQuartzCron(quartz);
  return { cron: kept, quartz, timeZone, nextFireTimes: upcomingFireTimes(kept, timeZone, count, from) };
}

/** The next `count` instants a readable cron fires at, strictly after `from` (fewer when it stops firing). */
export function upcomingFireTimes(cron: string, timeZone: string | undefined, count: number, from: Date): Date[] {
  const expression = CronExpressionParser.parse(normalizeCron(cron), { tz: timeZone, currentDate: from });
  const times: Date[] = [];
  while (times.length < count && expression.hasNext()) times.push(expression.next().toDate());
  return times;
}

let processZone: string | undefined;

/** The zone a time is shown in: the job's, or the process's (asked once: Intl answers it slowly). */
export function displayZone(timeZone: string | undefined): string {
  return timeZone ?? (processZone ??= Intl.DateTimeFormat().resolvedOptions().timeZone);
}

/**
 * The last text per cron and zone, and the instant until which it holds (its first firing): a thousand jobs on one
 * cron registering together log the same next firings, computed and formatted once (measured: 0.6 ms a job before).
 */
const nextFiringsTexts = new Map<string, { until: number; text: string }>();

/** `formatFireTimes` of the next `count` firings from now, as registration and reschedule logs show them. */
export function describeNextFirings(cron: string, timeZone: string | undefined, count = 3): string {
  const key = `${timeZone ?? ''}\u0000${count}\u0000${cron}`;
  const now = Date.now();
  const known = nextFiringsTexts.get(key);
  if (known && now < known.until) return known.text;
  const times = upcomingFireTimes(cron, timeZone, count, new Date(now));
  const text = formatFireTimes(times, timeZone);
  if (nextFiringsTexts.size > 1000) nextFiringsTexts.clear(); // bounded by the crons in use, not by time
  nextFiringsTexts.set(key, { until: times[0]?.getTime() ?? Number.POSITIVE_INFINITY, text });
  return text;
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** An instant as a person checks it: weekday, date and time on the zone's wall clock (`Tue 2026-11-24 12:00:00`). */
export function formatFireTime(time: Date, timeZone: string | undefined): string {
  const zone = displayZone(timeZone);
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      weekday: 'short',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    formats.set(zone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(time).map((part) => [part.type, part.value]));
  return `${parts.weekday} ${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`;
}

/** `Tue 2026-11-24 12:00:00, Tue 2026-12-01 12:00:00 (Europe/Berlin)`. */
export function formatFireTimes(times: readonly Date[], timeZone: string | undefined): string {
  const shown = times.map((time) => formatFireTime(time, timeZone));
  return `${shown.length === 0 ? 'none' : shown.join(', ')} (${displayZone(timeZone)})`;
}

/** A dialect refusal of a cron cron-parser reads, with what it would have fired at here, so the choice is clear. */
export function withFireTimes(message: string, cron: string, timeZone: string | undefined): string {
  if (validateCron(expandCronPreset(cron), timeZone) !== undefined) return message;
  const times = upcomingFireTimes(String(expandCronPreset(cron)), timeZone, 3, new Date());
  return `${message}; read here it would fire at ${formatFireTimes(times, timeZone)}`;
}

/**
 * A warning for a cron written with Quartz's habits (a `?`) and a numbered day of the week: the numbers differ
 * between the dialects (docs/guide/jobs-and-sharding.md, "Cron dialect"), and the fire times show which day was meant.
 * Undefined otherwise.
 */
export function dayOfWeekNumberWarning(cron: string, timeZone: string | undefined): string | undefined {
  const fields = cron.trim().split(/\s+/);
  if (fields.length < 5 || !fields.includes('?')) return undefined;
  const dayOfWeek = fields[fields.length === 5 ? 4 : 5]!;
  // Plain numbers only: names mean the same day in both, and `5L`/`5#3` are translated with their number.
  if (!/^[\d,\-/]+$/.test(dayOfWeek) || !/\d/.test(dayOfWeek.replace(/\/\d+$/, ''))) return undefined;
  const times = upcomingFireTimes(cron, timeZone, 3, new Date());
  return (
    `cron '${cron}' numbers day-of-week as cron-parser does (0 or 7 = Sunday, 1 = Monday; Quartz: 1 = Sunday): ` +
    `next firings ${formatFireTimes(times, timeZone)}. Write the days as names (MON-FRI) to mean the same in both`
  );
}
