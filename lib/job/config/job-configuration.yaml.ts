import { isMap, isScalar, parseDocument, stringify } from 'yaml';
import { describeError } from '../../errors/elastic-job.errors.js';
import { fromJavaTimeZone, TimeZoneDialectError, toJavaTimeZone } from '../../schedule/java-time-zone.js';
import { CronDialectError, fromQuartzCron, toQuartzCron } from '../../schedule/quartz-cron.js';
import type { JobConfiguration } from './job-configuration.js';

/**
 * The config node's YAML, as ElasticJob writes it (docs/reference/elasticjob.md §1.4): keys in alphabetical order,
 * nulls omitted, every
 * boolean written (a Java reader takes a missing boolean as false).
 */
export function toConfigYaml(config: JobConfiguration): string {
  // The document's lines, one key each, written apart and joined: the same text as stringify() of the whole map
  // (block mapping, no line folding; test/unit/config-yaml-text.spec.ts), but the lines that jobs share (their cron,
  // booleans, counts) are written once per process. A whole document per job cost 0.4 ms, 4 s of a 10,000-job start.
  const pojo = configPojo(config);
  let text = '';
  for (const key of WRITTEN_KEYS) {
    const value = pojo[key];
    if (value === undefined) continue;
    // A map (props): written whole, its names sorted (a few typed jobs have one; not worth a cache).
    text +=
      typeof value === 'object'
        ? stringify({ [key]: value }, { ...YAML_OPTIONS, sortMapEntries: true })
        : configLine(key, value);
  }
  return text;
}

const YAML_OPTIONS = { singleQuote: true, lineWidth: 0 } as const;
/** `key: value` lines already written (bounded: cleared when full; a job's own name is seldom asked for twice). */
const configLines = new Map<string, string>();

/**
 * Texts YAML writes as they are (a job's name mostly): a letter or `_` first, no space or indicator, not a word read
 * as another type.
 */
const PLAIN_TEXT = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const TYPED_WORDS = /^(?:true|false|null|yes|no|on|off|y|n)$/i;

function configLine(key: string, value: string | number | boolean): string {
  if (typeof value === 'string' && PLAIN_TEXT.test(value) && !TYPED_WORDS.test(value)) return `${key}: ${value}\n`;
  // -0 written as such (String(-0) is '0').
  const memo = `${key}\u0000${typeof value}\u0000${Object.is(value, -0) ? '-0' : value}`;
  let line = configLines.get(memo);
  if (line === undefined) {
    line = stringify({ [key]: value }, YAML_OPTIONS);
    if (configLines.size >= 4096) configLines.clear();
    configLines.set(memo, line);
  }
  return line;
}

/**
 * The stored config node with the fields this library writes replaced by `config`'s, in place: keys it does not
 * model (Java's `props`, `jobExtraConfigurations` with their tags, `jobListenerTypes`, ...) are kept as they are,
 * so that an update made here does not break a Java job's settings. Keys stay in alphabetical order.
 */
export function mergeConfigYaml(stored: string, config: JobConfiguration): string {
  const document = parseDocument(stored, { customTags: [], logLevel: 'silent', uniqueKeys: true });
  if (document.errors.length > 0 || !isMap(document.contents)) return toConfigYaml(config);
  const ours = configPojo(config);
  for (const key of WRITTEN_KEYS) {
    if (key in ours) document.set(key, ours[key]);
    else document.delete(key);
  }
  const keyOf = (pair: { key: unknown }): string => String(isScalar(pair.key) ? pair.key.value : pair.key);
  document.contents.items.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
  return document.toString({ singleQuote: true, lineWidth: 0 });
}

/**
 * Every key configPojo may write (a default strategy or handler is written as no key), in the order toConfigYaml
 * writes them: alphabetical, as ElasticJob (and stringify with sortMapEntries) does.
 */
const WRITTEN_KEYS = [
  'cron',
  'description',
  'disabled',
  'failover',
  'jobErrorHandlerType',
  'jobName',
  'jobParameter',
  'jobShardingStrategyType',
  'maxTimeDiffSeconds',
  'misfire',
  'monitorExecution',
  'overwrite',
  'props',
  'reconcileIntervalMinutes',
  'shardingItemParameters',
  'shardingTotalCount',
  'staticSharding',
  'timeZone',
] as const;

/** The config node's fields as ElasticJob's JobConfigurationPOJO holds them, nulls (undefined) left out. */
function configPojo(
  config: JobConfiguration,
): Partial<Record<(typeof WRITTEN_KEYS)[number], string | number | boolean | Readonly<Record<string, string>>>> {
  const pojo: Record<string, string | number | boolean | Readonly<Record<string, string>> | undefined> = {
    // Quartz's dialect, as ElasticJob stores it: Java instances read this node (quartz-cron.ts).
    // A one-off job has none (ElasticJob's OneOffJobBootstrap writes its POJO's null cron: no key).
    cron: config.cron === '' ? undefined : toQuartzCron(config.cron),
    description: config.description,
    disabled: config.disabled,
    failover: config.failover,
    // Java writes neither type when it is the default (its POJO holds null, and nulls are dropped); it reads a
    // missing one as the default, as we do.
    jobErrorHandlerType: config.jobErrorHandlerType === 'LOG' ? undefined : config.jobErrorHandlerType,
    jobName: config.jobName,
    jobParameter: config.jobParameter,
    jobShardingStrategyType:
      config.jobShardingStrategyType === 'AVG_ALLOCATION' ? undefined : config.jobShardingStrategyType,
    maxTimeDiffSeconds: config.maxTimeDiffSeconds,
    misfire: config.misfire,
    monitorExecution: config.monitorExecution,
    overwrite: config.overwrite,
    // Java's Properties, a map of strings; none when empty (ElasticJob's representer drops empty collections).
    props: Object.keys(config.props).length > 0 ? config.props : undefined,
    reconcileIntervalMinutes: config.reconcileIntervalMinutes,
    shardingItemParameters: config.shardingItemParameters,
    shardingTotalCount: config.shardingTotalCount,
    staticSharding: config.staticSharding,
    // GMT offsets where Java can read them (java-time-zone.ts).
    timeZone: toJavaTimeZone(config.timeZone),
  };
  return Object.fromEntries(Object.entries(pojo).filter(([, value]) => value !== undefined));
}

/** The fields of a config node we act on, as ElasticJob's JobConfigurationPOJO reads them (missing booleans: false). */
export interface StoredJobConfiguration {
  cron?: string;
  timeZone?: string;
  shardingTotalCount: number;
  shardingItemParameters: string;
  jobParameter: string;
  monitorExecution: boolean;
  failover: boolean;
  misfire: boolean;
  maxTimeDiffSeconds: number;
  reconcileIntervalMinutes: number;
  jobShardingStrategyType?: string;
  jobErrorHandlerType?: string;
  description: string;
  disabled: boolean;
  overwrite: boolean;
  staticSharding: boolean;
  props: Readonly<Record<string, string>>;
}

/** A config node that cannot be adopted: what is wrong, and in which field ('config' for the node as a whole). */
export class StoredConfigProblem extends Error {
  constructor(
    readonly field: string,
    readonly detail: string,
  ) {
    super(field === 'config' ? detail : `'${field}' ${detail}`);
  }
}

/**
 * Reads a config node written by us or by Java ElasticJob (extra keys such as `props` are ignored), strictly: YAML
 * with any syntax error, a document that is not a map, or a known field of the wrong type throws a
 * StoredConfigProblem, so that a bad write is refused whole instead of adopted in fragments. Missing fields take
 * the values Java's JobConfigurationPOJO gives them (booleans false, counts 0), as a Java instance would read them.
 */
export function fromConfigYaml(text: string): StoredJobConfiguration {
  // SnakeYAML may tag nested objects (jobExtraConfigurations): an unknown tag is a warning, its value kept as data.
  const document = parseDocument(text, { customTags: [], logLevel: 'silent', uniqueKeys: true });
  const syntaxError = document.errors[0];
  if (syntaxError) throw new StoredConfigProblem('config', `is not valid YAML: ${syntaxError.message.split('\n')[0]}`);
  let raw: unknown;
  try {
    // Throws on what parses but cannot become data: an alias to no anchor, an alias bomb (maxAliasCount).
    raw = document.toJS() ?? {};
  } catch (error) {
    throw new StoredConfigProblem('config', `cannot be read as YAML data: ${describeError(error)}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new StoredConfigProblem('config', 'is not a YAML map of job settings');
  return fromConfigFields(raw as Record<string, unknown>);
}

/**
 * What a config node holding `config` as this library writes it reads back as, without writing and parsing the
 * YAML (the same fields, through the same reading rules): a job that finds its own node needs no parse.
 */
export function storedFormOf(config: JobConfiguration): StoredJobConfiguration {
  return fromConfigFields(configPojo(config));
}

/** The config node's fields, read strictly by the rules of fromConfigYaml. */
function fromConfigFields(fields: Record<string, unknown>): StoredJobConfiguration {
  const present = (key: string): boolean => fields[key] !== undefined && fields[key] !== null;
  const str = (key: string): string | undefined => {
    if (!present(key)) return undefined;
    const value = fields[key];
    // Unquoted scalars that YAML reads as numbers or booleans are strings to Java's String fields.
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
    throw new StoredConfigProblem(key, `must be a string, got ${describe(value)}`);
  };
  const int = (key: string, missing: number): number => {
    if (!present(key)) return missing;
    const value = fields[key];
    if (typeof value === 'number' && Number.isInteger(value)) return value;
    if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) return Number(value);
    throw new StoredConfigProblem(key, `must be an integer, got ${describe(value)}`);
  };
  const bool = (key: string): boolean => {
    if (!present(key)) return false;
    const value = fields[key];
    if (typeof value === 'boolean') return value;
    if (value === 'true' || value === 'false') return value === 'true';
    throw new StoredConfigProblem(key, `must be true or false, got ${describe(value)}`);
  };
  return {
    cron: storedCron(str('cron')),
    timeZone: storedTimeZone(str('timeZone')),
    shardingTotalCount: int('shardingTotalCount', 0),
    shardingItemParameters: str('shardingItemParameters') ?? '',
    jobParameter: str('jobParameter') ?? '',
    monitorExecution: bool('monitorExecution'),
    failover: bool('failover'),
    misfire: bool('misfire'),
    maxTimeDiffSeconds: int('maxTimeDiffSeconds', -1),
    reconcileIntervalMinutes: int('reconcileIntervalMinutes', 0),
    jobShardingStrategyType: str('jobShardingStrategyType'),
    jobErrorHandlerType: str('jobErrorHandlerType'),
    description: str('description') ?? '',
    disabled: bool('disabled'),
    overwrite: bool('overwrite'),
    staticSharding: bool('staticSharding'),
    props: propsOf(fields.props),
  };
}

/** The stored zone as this library names it (Java's GMT offsets as Etc/GMT names). */
function storedTimeZone(timeZone: string | undefined): string | undefined {
  try {
    return fromJavaTimeZone(timeZone);
  } catch (error) {
    if (error instanceof TimeZoneDialectError) throw new StoredConfigProblem('timeZone', error.message);
    throw error;
  }
}

/** The stored cron read with the meaning its writer gave it (Quartz's when it has a `?`). */
function storedCron(cron: string | undefined): string | undefined {
  if (cron === undefined) return undefined;
  try {
    return fromQuartzCron(cron);
  } catch (error) {
    if (error instanceof CronDialectError) throw new StoredConfigProblem('cron', error.message);
    throw error;
  }
}

function describe(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value); // a self-referencing anchor (`&a [*a]`) cannot be written as JSON
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Java's Properties as SnakeYAML writes them: a map of names to scalars, read as strings; missing: none. */
function propsOf(value: unknown): Readonly<Record<string, string>> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new StoredConfigProblem('props', 'must be a map of property names to values');
  const props: Record<string, string> = {};
  for (const [name, entry] of Object.entries(value as Record<string, unknown>)) {
    if (typeof entry !== 'string' && typeof entry !== 'number' && typeof entry !== 'boolean')
      throw new StoredConfigProblem('props', `'${name.slice(0, 64)}' must be a string value`);
    props[name] = String(entry);
  }
  return props;
}
