/**
 * The config node's `timeZone` is read by Java ElasticJob instances, which accept only `GMT` and `GMT±HH:MM`
 * (`JobScheduleController.parseTimeZoneString` checks the `GMT` prefix; docs/reference/elasticjob.md §1.4). This
 * library takes IANA names (Intl, cron-parser), where a fixed offset is `Etc/GMT∓H` (the sign inverted, whole
 * hours). The two meet on UTC and whole-hour offsets, translated both ways; any other IANA name is stored as it is
 * (a Java instance cannot read it: docs/interop-java.md).
 */

const UTC_NAMES = new Set([
  'UTC',
  'Etc/UTC',
  'GMT',
  'Etc/GMT',
  'Etc/GMT+0',
  'Etc/GMT-0',
  'Etc/GMT0',
  'Etc/UCT',
  'UCT',
  'Etc/Universal',
  'Etc/Zulu',
]);

/** Thrown with a message saying what cannot be translated. */
export class TimeZoneDialectError extends Error {}

/** The zone as written to the config node: `GMT`/`GMT±HH:00` where Java can read it, else as given. */
export function toJavaTimeZone(timeZone: string | undefined): string | undefined {
  if (timeZone === undefined) return undefined;
  if (UTC_NAMES.has(timeZone)) return 'GMT';
  const offset = /^Etc\/GMT([+-])(\d{1,2})$/.exec(timeZone);
  if (!offset) return timeZone;
  // Etc/GMT+5 is five hours *behind* GMT (POSIX sign): GMT-05:00.
  const sign = offset[1] === '+' ? '-' : '+';
  return `GMT${sign}${offset[2]!.padStart(2, '0')}:00`;
}

/** A stored zone read as this library names it: Java's `GMT±H[H][:MM]` as `Etc/GMT∓H`; anything else as it is. */
export function fromJavaTimeZone(stored: string | undefined): string | undefined {
  if (stored === undefined || stored.trim() === '') return undefined; // Java: "" is none
  if (stored === 'GMT') return 'GMT';
  const offset = /^GMT([+-])(\d{1,2})(?::?(\d{2}))?$/.exec(stored);
  if (!offset) return stored;
  const hours = Number(offset[2]);
  const minutes = Number(offset[3] ?? '0');
  if (minutes !== 0 || hours > 14) {
    throw new TimeZoneDialectError(
      `'${stored}' is a fixed offset this library cannot name (only whole hours up to 14 have an IANA name, Etc/GMT±H)`,
    );
  }
  if (hours === 0) return 'GMT';
  return `Etc/GMT${offset[1] === '+' ? '-' : '+'}${hours}`;
}
