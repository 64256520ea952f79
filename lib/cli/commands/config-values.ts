import type { JobConfigurationChanges } from '../../lifecycle/job-configuration.api.js';
import { UsageError } from './cli-errors.js';

/** How a `--set` value is read for each field of the configuration. */
type FieldKind = 'number' | 'boolean' | 'string' | 'zone' | 'properties';

const FIELD_KINDS = {
  cron: 'string',
  timeZone: 'zone',
  shardingTotalCount: 'number',
  shardingItemParameters: 'string',
  jobParameter: 'string',
  monitorExecution: 'boolean',
  failover: 'boolean',
  misfire: 'boolean',
  maxTimeDiffSeconds: 'number',
  reconcileIntervalMinutes: 'number',
  jobShardingStrategyType: 'string',
  jobErrorHandlerType: 'string',
  description: 'string',
  disabled: 'boolean',
  overwrite: 'boolean',
  staticSharding: 'boolean',
  props: 'properties',
} as const satisfies Record<keyof JobConfigurationChanges, FieldKind>;

/**
 * `--set key=value` options as configuration changes, each value read by its field's type: numbers, `true` or
 * `false`, strings as written (`shardingItemParameters` as `0=a,1=b`; `timeZone=` empty for the process's zone).
 * A malformed option or value is a UsageError; a key that is no field is passed on as a string, so that the
 * operator API refuses it with the list of fields that can be changed; what the values mean (a valid cron, a
 * count in range) is the API's to check.
 */
export function parseConfigChanges(sets: readonly string[]): JobConfigurationChanges {
  const changes: Record<string, unknown> = {};
  for (const set of sets) {
    const equals = set.indexOf('=');
    if (equals <= 0) throw new UsageError(`--set takes key=value, got '${set}'`);
    const key = set.slice(0, equals);
    const raw = set.slice(equals + 1);
    changes[key] = Object.hasOwn(FIELD_KINDS, key) ? read(key, FIELD_KINDS[key as keyof typeof FIELD_KINDS], raw) : raw;
  }
  return changes as JobConfigurationChanges;
}

function read(key: string, kind: FieldKind, raw: string): unknown {
  switch (kind) {
    case 'number': {
      if (!/^-?\d+$/.test(raw)) throw new UsageError(`--set ${key} takes an integer, got '${raw}'`);
      return Number(raw);
    }
    case 'boolean': {
      if (raw !== 'true' && raw !== 'false') throw new UsageError(`--set ${key} takes true or false, got '${raw}'`);
      return raw === 'true';
    }
    case 'zone':
      return raw === '' ? undefined : raw;
    case 'string':
      return raw;
    case 'properties': {
      // A JSON object of names to strings (the whole set: it replaces the stored one); the API checks the values.
      try {
        const value: unknown = JSON.parse(raw);
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value;
      } catch {
        // said below
      }
      throw new UsageError(`--set ${key} takes a JSON object of properties, e.g. '{"http.uri":"http://..."}'`);
    }
  }
}
