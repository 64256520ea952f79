import { type CronExpression, CronExpressionParser } from 'cron-parser';
import { describeError } from '../errors/elastic-job.errors.js';

/**
 * cron-parser's presets (and `@midnight`), written out with seconds: stored so in ZooKeeper, in Quartz's dialect,
 * since Java instances have no presets. `@weekly` is Sunday midnight, as in cron-parser.
 */
export const CRON_PRESETS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 0 1 1 *',
  '@annually': '0 0 0 1 1 *',
  '@monthly': '0 0 0 1 * *',
  '@weekly': '0 0 0 * * 0',
  '@daily': '0 0 0 * * *',
  '@midnight': '0 0 0 * * *',
  '@hourly': '0 0 * * * *',
  '@minutely': '0 * * * * *',
  '@secondly': '* * * * * *',
  '@weekdays': '0 0 0 * * 1-5',
  '@weekends': '0 0 0 * * 0,6',
};

/** A preset written out (see CRON_PRESETS); anything else as it is. */
export function expandCronPreset<T>(cron: T): T | string {
  if (typeof cron !== 'string') return cron;
  const name = cron.trim().toLowerCase();
  return Object.hasOwn(CRON_PRESETS, name) ? CRON_PRESETS[name]! : cron;
}

/**
 * ElasticJob users write Quartz cron (`0/5 * * * * ?`). cron-parser reads `?` too; we also accept a Quartz year
 * field only when it is `*` (dropped). Anything cron-parser cannot read is an error with its message.
 * Day-of-week follows cron-parser: 0 or 7 = Sunday (Quartz: 1 = Sunday).
 */
export function normalizeCron(cron: string): string {
  const fields = String(expandCronPreset(cron)).trim().split(/\s+/);
  if (fields.length === 7 && fields[6] === '*') fields.pop();
  return fields.map((field) => (field === '?' ? '*' : field)).join(' ');
}

/**
 * How a 5-field cron as written was read, for the job's start-up line: minute first (cron-parser's and Unix's
 * reading), where 6 fields are read seconds first. Undefined for any other cron (a preset, 6 or 7 fields).
 */
export function fiveFieldReading(written: string | undefined, kept: string): string | undefined {
  if (written === undefined || expandCronPreset(written) !== written) return undefined;
  if (written.trim().split(/\s+/).length !== 5) return undefined;
  return `cron '${written}' has 5 fields: read minute first, as '${kept}' (6 fields are read seconds first)`;
}

// Parsing is the costly part of cron-parser (a thousand every-second jobs parse a thousand times a second
// otherwise). Both caches are keyed by the expression and zone, so jobs sharing a cron share one entry; they
// are pure (an expression is reset before each use) and bounded by the distinct crons an app declares.
const validated = new Map<string, string | undefined>();
const parsed = new Map<string, CronExpression>();

/** Returns an error message, or undefined when the cron and time zone are usable. */
export function validateCron(cron: unknown, timeZone: string | undefined): string | undefined {
  if (typeof cron !== 'string') return checkCron(cron, timeZone);
  const key = `${timeZone ?? ''}\u0000${cron}`;
  if (!validated.has(key)) validated.set(key, checkCron(cron, timeZone));
  return validated.get(key);
}

function checkCron(cron: unknown, timeZone: string | undefined): string | undefined {
  if (typeof cron !== 'string' || cron.trim() === '')
    return 'is required: a 6-field (with seconds) or 5-field cron expression';
  const fields = cron.trim().split(/\s+/);
  if (fields.length === 7 && fields[6] !== '*') return `'${cron}' has a Quartz year field; only '*' is supported there`;
  if (fields.length < 5 || fields.length > 7)
    return `'${cron}' must have 5 or 6 fields: 6 are read seconds first ('*/5 * * * * *'), 5 minute first ('*/5 * * * *')`;
  // Quartz's 'W' (nearest weekday) belongs to day-of-month; elsewhere a W is part of a name (WED).
  const dayOfMonth = fields[fields.length >= 6 ? 3 : 2] ?? '';
  if (/W/i.test(dayOfMonth)) return `'${cron}': the Quartz 'W' (nearest weekday) is not supported`;
  try {
    CronExpressionParser.parse(normalizeCron(cron), { tz: timeZone }).next();
  } catch (error) {
    return `'${cron}' is not a valid cron expression: ${describeError(error)}`;
  }
  return undefined;
}

export function validateTimeZone(timeZone: unknown): string | undefined {
  if (timeZone === undefined) return undefined;
  if (typeof timeZone !== 'string' || timeZone === '') return 'must be an IANA time zone name such as "Europe/Berlin"';
  try {
    Intl.DateTimeFormat('en-US', { timeZone }); // throws a RangeError on a name it does not know
  } catch {
    return `'${timeZone}' is not a known IANA time zone name (e.g. "UTC", "Europe/Berlin")`;
  }
  return undefined;
}

/**
 * The last answer per expression: `next` is the first instant after `after`, so no instant lies between them and
 * any time in [after, next) has the same answer. Jobs sharing a cron ask at nearly the same time, and a
 * thousand of them then cost one computation per firing instead of a thousand (cron-parser allocates ~10 KB).
 */
const lastAnswers = new Map<string, { after: number; next: number }>();

/** The next fire time strictly after `after`. */
export function nextFireTime(cron: string, timeZone: string | undefined, after: Date): Date {
  const key = `${timeZone ?? ''}\u0000${cron}`;
  const time = after.getTime();
  const last = lastAnswers.get(key);
  if (last && last.after <= time && time < last.next) return new Date(last.next);
  let expression = parsed.get(key);
  if (!expression) {
    expression = CronExpressionParser.parse(normalizeCron(cron), { tz: timeZone, currentDate: after });
    parsed.set(key, expression);
  } else {
    expression.reset(after);
  }
  const next = expression.next().toDate();
  lastAnswers.set(key, { after: time, next: next.getTime() });
  return next;
}
