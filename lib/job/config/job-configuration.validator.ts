import { BoundedMemo } from '../../util/bounded-memo.js';
import { JobConfigurationError } from '../../errors/elastic-job.errors.js';
import type {
  JobErrorHandler,
  JobShardingStrategy,
  ShardedJobOptions,
} from '../../interfaces/sharded-job-options.interface.js';
import { MAX_JOB_NAME_LENGTH, nodeNameProblem } from '../../registry/zookeeper-names.js';
import { MAX_NODE_DATA_BYTES } from '../../registry/request-limits.js';
import { expandCronPreset, normalizeCron, validateCron, validateTimeZone } from '../../schedule/cron-expression.js';
import { CronDialectError, fromQuartzCron, toQuartzCron } from '../../schedule/quartz-cron.js';
import { withFireTimes } from '../../schedule/cron-preview.js';
import { BUILT_IN_SHARDING_STRATEGIES } from '../plugins/sharding-strategies.js';
import { formatShardingItemParameters, parseShardingItemParameters } from './sharding-item-parameters.js';
import { BUILT_IN_ERROR_HANDLER_TYPES } from '../plugins/job-error-handlers.js';
import { JOB_DEFAULTS, typeName, type JobConfiguration } from './job-configuration.js';
import { alertPropsProblem, isAlertHandlerType } from '../alerts/alert-props.js';
import { toConfigYaml } from './job-configuration.yaml.js';
import { itemPoliciesOf, withPolicyProps } from '../policies/item-policies.js';

/** The strategy and error handler names every job knows (ElasticJob's). */
export const BUILT_IN_NAMES = {
  strategies: Object.keys(BUILT_IN_SHARDING_STRATEGIES),
  errorHandlers: BUILT_IN_ERROR_HANDLER_TYPES,
};

/** The custom strategy and error handler objects of `@ShardedJob()` options (validated by resolveJobConfiguration). */
export function customPlugins(options: ShardedJobOptions): {
  strategy?: JobShardingStrategy;
  errorHandler?: JobErrorHandler;
} {
  const strategy = options.jobShardingStrategyType;
  const handler = options.jobErrorHandlerType;
  return {
    ...(typeof strategy === 'object' && strategy !== null ? { strategy } : {}),
    ...(typeof handler === 'object' && handler !== null ? { errorHandler: handler } : {}),
  };
}

/**
 * The most sharding items one job may have. Measured (docs/guide/guarantees.md): 10000 items shard in about 6 s and
 * fire within a second of the instant in 150 to 200 MB; 50000 still work at 600 MB; 100000 block the event loop
 * for seconds at a time and lose the session. The bound stays a tenfold below the count that failed.
 */
export const MAX_SHARDING_TOTAL_COUNT = 10_000;

function fail(jobName: string | undefined, field: string, detail: string): never {
  throw new JobConfigurationError(jobName, field, detail);
}

function checkBoolean(options: ShardedJobOptions, field: keyof ShardedJobOptions): void {
  const value = options[field];
  if (value !== undefined && typeof value !== 'boolean')
    fail(options.jobName, field, `must be true or false, got ${JSON.stringify(value)}`);
}

function checkInteger(options: ShardedJobOptions, field: keyof ShardedJobOptions, min: number): void {
  const value = options[field];
  if (value !== undefined && (typeof value !== 'number' || !Number.isInteger(value) || value < min)) {
    fail(options.jobName, field, `must be an integer >= ${min}, got ${JSON.stringify(value)}`);
  }
}

/**
 * Validates `@ShardedJob()` options and applies ElasticJob's defaults. Throws `JobConfigurationError` naming the
 * job and the field. Pure: touches nothing outside.
 */
/** The longest identity accepted: a Java class name is far shorter; this keeps the root node small. */
const MAX_JOB_CLASS_LENGTH = 1024;

/**
 * The identity a job stores in its root node: `options.jobClass` when given, else `defaultIdentity`
 * (`ClassName.methodName`). Throws a JobConfigurationError naming `jobClass` for anything else than a non-empty
 * single-line string.
 */
export function resolveJobClass(options: ShardedJobOptions, defaultIdentity: string): string {
  const { jobClass } = options;
  if (jobClass === undefined) return defaultIdentity;
  if (typeof jobClass !== 'string' || jobClass.trim() === '')
    fail(
      options.jobName,
      'jobClass',
      `must be a non-empty string such as 'com.acme.ReportJob', got ${JSON.stringify(jobClass)}`,
    );
  // oxlint-disable-next-line no-control-regex -- control characters are what is refused
  if (jobClass !== jobClass.trim() || /[\u0000-\u001f\u007f]/.test(jobClass))
    fail(options.jobName, 'jobClass', 'must be one line, without whitespace around it (it is compared as written)');
  if (jobClass.length > MAX_JOB_CLASS_LENGTH)
    fail(options.jobName, 'jobClass', `is ${jobClass.length} characters long; at most ${MAX_JOB_CLASS_LENGTH}`);
  return jobClass;
}

/**
 * Crons already kept, by time zone and cron as written: every job of an app resolves its cron twice at start-up (the
 * decorator, then the config node read back), most jobs share a few crons, and the checks and Quartz round trip below
 * were about 0.1 ms a resolution (issue 43). Only accepted crons are kept; bounded: cleared when full.
 */
const keptCrons = new BoundedMemo<string>();

/** The cron a job runs and stores, checked; throws a JobConfigurationError naming `cron`. */
function keptCron(jobName: string, written: unknown, timeZone: string | undefined): string {
  if (typeof written !== 'string') return checkedCron(jobName, written, timeZone);
  return keptCrons.get(`${timeZone ?? ''}\u0000${written}`, () => checkedCron(jobName, written, timeZone));
}

function checkedCron(jobName: string, written: unknown, timeZone: string | undefined): string {
  const cronError = validateCron(expandCronPreset(written), timeZone);
  if (cronError) fail(jobName, 'cron', `${cronError} (a job run only when triggered takes oneOff: true instead)`);
  // The config node stores it in Quartz's dialect for Java instances (quartz-cron.ts): it must be expressible
  // there, and the form kept is the one that reads back the same.
  let cron: string;
  try {
    cron = fromQuartzCron(toQuartzCron(normalizeCron(written as string)));
  } catch (error) {
    if (!(error instanceof CronDialectError)) throw error;
    fail(jobName, 'cron', withFireTimes(error.message, written as string, timeZone));
  }
  // The kept form is what the trigger runs: it must parse too (names and renumbered L/# always do; checked).
  const keptError = validateCron(cron, timeZone);
  if (keptError) fail(jobName, 'cron', `'${String(written)}' read back as ${keptError}`);
  return cron;
}

export function resolveJobConfiguration(
  options: ShardedJobOptions,
  /** Type names a string may name; default the built-ins (a config node may also name the job's custom ones). */
  known: { strategies: readonly string[]; errorHandlers: readonly string[] } = BUILT_IN_NAMES,
): JobConfiguration {
  if (typeof options !== 'object' || options === null)
    fail(undefined, 'options', '@ShardedJob() needs an options object');
  const { jobName } = options;
  if (typeof jobName !== 'string' || jobName.trim() === '')
    fail(undefined, 'jobName', 'is required: a non-empty string, unique in the namespace');
  if (jobName.length > MAX_JOB_NAME_LENGTH)
    fail(
      jobName,
      'jobName',
      `is ${jobName.length} characters long; at most ${MAX_JOB_NAME_LENGTH} (the operator's tools take no longer name)`,
    );
  const nameProblem = nodeNameProblem(jobName);
  if (nameProblem) fail(jobName, 'jobName', `must be a ZooKeeper node name: it ${nameProblem}`);

  const tzError = validateTimeZone(options.timeZone);
  if (tzError) fail(jobName, 'timeZone', tzError);
  if (options.oneOff !== undefined && typeof options.oneOff !== 'boolean')
    fail(jobName, 'oneOff', `must be true or false, got ${JSON.stringify(options.oneOff)}`);
  let cron: string;
  if (options.oneOff) {
    // ElasticJob's OneOffJobBootstrap refuses a cron ("Cron should be empty"): so do we, rather than ignore it.
    if (options.cron !== undefined && options.cron !== '')
      fail(jobName, 'cron', 'a one-off job has no cron: it runs when triggered (remove cron, or oneOff)');
    cron = '';
  } else {
    cron = keptCron(jobName, options.cron, options.timeZone);
  }

  const total = options.shardingTotalCount;
  if (typeof total !== 'number' || !Number.isInteger(total) || total < 1) {
    fail(jobName, 'shardingTotalCount', `is required: an integer > 0, got ${JSON.stringify(total)}`);
  }
  if (total > MAX_SHARDING_TOTAL_COUNT) {
    fail(
      jobName,
      'shardingTotalCount',
      `${total} is more than the ${MAX_SHARDING_TOTAL_COUNT} items one job supports (see docs/guide/guarantees.md): ` +
        `split the work over several jobs, or give each item more of it`,
    );
  }

  const parameters = parseShardingItemParameters(options.shardingItemParameters);
  if (typeof parameters === 'string') fail(jobName, 'shardingItemParameters', parameters);
  for (const item of parameters.keys()) {
    if (item >= total)
      fail(
        jobName,
        'shardingItemParameters',
        `item ${item} is outside 0..${total - 1} (shardingTotalCount is ${total})`,
      );
  }

  for (const field of ['monitorExecution', 'failover', 'misfire', 'disabled', 'overwrite', 'staticSharding'] as const)
    checkBoolean(options, field);
  if (options.maxTimeDiffSeconds !== undefined) {
    const value = options.maxTimeDiffSeconds;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < -1)
      fail(jobName, 'maxTimeDiffSeconds', `must be -1 (no check) or an integer >= 0, got ${JSON.stringify(value)}`);
  }
  checkInteger(options, 'reconcileIntervalMinutes', 0);
  for (const field of ['jobParameter', 'description'] as const) {
    if (options[field] !== undefined && typeof options[field] !== 'string')
      fail(jobName, field, `must be a string, got ${JSON.stringify(options[field])}`);
  }

  const strategy = options.jobShardingStrategyType ?? JOB_DEFAULTS.jobShardingStrategyType;
  if (typeof strategy === 'string') {
    if (!known.strategies.includes(strategy)) {
      fail(
        jobName,
        'jobShardingStrategyType',
        `unknown strategy '${strategy}'; use ${known.strategies.join(', ')} or an object implementing ` +
          `JobShardingStrategy`,
      );
    }
  } else if (
    typeof strategy !== 'object' ||
    strategy === null ||
    typeof strategy.sharding !== 'function' ||
    typeof strategy.type !== 'string' ||
    strategy.type === ''
  ) {
    fail(
      jobName,
      'jobShardingStrategyType',
      'a custom strategy must be an object with a non-empty `type` and a `sharding(instances, jobName, total)` method',
    );
  }

  const handler = options.jobErrorHandlerType ?? JOB_DEFAULTS.jobErrorHandlerType;
  if (typeof handler === 'string') {
    if (!known.errorHandlers.includes(handler))
      fail(
        jobName,
        'jobErrorHandlerType',
        `unknown error handler '${handler}'; use ${known.errorHandlers.join(', ')} or an object implementing ` +
          `JobErrorHandler`,
      );
  } else if (
    typeof handler !== 'object' ||
    handler === null ||
    typeof handler.handleException !== 'function' ||
    typeof handler.type !== 'string' ||
    handler.type === ''
  ) {
    fail(
      jobName,
      'jobErrorHandlerType',
      'a custom handler must be an object with a non-empty `type` and a `handleException(jobName, error, context)` ' +
        'method',
    );
  }

  const strings = {
    shardingItemParameters: formatShardingItemParameters(parameters),
    jobParameter: options.jobParameter ?? '',
    description: options.description ?? '',
  };
  const config: JobConfiguration = {
    jobName,
    cron,
    timeZone: options.timeZone,
    shardingTotalCount: total,
    shardingItemParameters: strings.shardingItemParameters,
    jobParameter: options.jobParameter ?? JOB_DEFAULTS.jobParameter,
    monitorExecution: options.monitorExecution ?? JOB_DEFAULTS.monitorExecution,
    failover: options.failover ?? JOB_DEFAULTS.failover,
    misfire: options.misfire ?? JOB_DEFAULTS.misfire,
    maxTimeDiffSeconds: options.maxTimeDiffSeconds ?? JOB_DEFAULTS.maxTimeDiffSeconds,
    reconcileIntervalMinutes: options.reconcileIntervalMinutes ?? JOB_DEFAULTS.reconcileIntervalMinutes,
    jobShardingStrategyType: typeName(strategy),
    jobErrorHandlerType: typeName(handler),
    description: options.description ?? JOB_DEFAULTS.description,
    disabled: options.disabled ?? JOB_DEFAULTS.disabled,
    overwrite: options.overwrite ?? JOB_DEFAULTS.overwrite,
    staticSharding: options.staticSharding ?? JOB_DEFAULTS.staticSharding,
    // The item policies' options are stored in props (job/policies/item-policies.ts), checked there.
    props: withPolicyProps(options, checkedProps(jobName, options.props)),
  };
  // An alert handler's settings are the job's props, checked as ElasticJob's *JobErrorHandlerPropertiesValidator
  // checks them (and more: a URL, a port, a boolean), so that a bad one is refused here, not at the first failure.
  if (typeof handler === 'string' && isAlertHandlerType(handler)) {
    const problem = alertPropsProblem(handler, config.props);
    if (problem) fail(jobName, `props.${problem.prop}`, problem.detail);
  }
  itemPoliciesOf(jobName, config.props);

  // The config node must fit in one ZooKeeper node (jute.maxbuffer), measured as written: YAML quotes, escapes and
  // indents the strings, so their own length is not enough. Written out only when it might not fit: a character
  // takes at most 6 bytes in the YAML (`\u0000` escapes; 3 bytes of UTF-8 otherwise), the rest is a few hundred.
  const text = `${config.jobName}${config.cron}${config.timeZone ?? ''}${config.jobShardingStrategyType}${config.jobErrorHandlerType}`;
  const bound = 6 * (text.length + Object.values(strings).reduce((n, value) => n + value.length, 0)) + 4096;
  const bytes = bound <= MAX_NODE_DATA_BYTES ? 0 : Buffer.byteLength(toConfigYaml(config), 'utf8');
  if (bytes > MAX_NODE_DATA_BYTES) {
    const largest = (Object.keys(strings) as Array<keyof typeof strings>).sort(
      (a, b) => strings[b].length - strings[a].length,
    )[0]!;
    fail(
      jobName,
      largest,
      `the configuration written as YAML (${bytes} bytes) would not fit in ZooKeeper's config node ` +
        `(${MAX_NODE_DATA_BYTES} bytes at most): keep large data out of the job configuration`,
    );
  }
  return config;
}

/** The most job properties one job may have, and the longest name; values count in the node's size check. */
const MAX_PROPS = 256;
const MAX_PROP_NAME_LENGTH = 256;

/** `props`: an object of string names to string values, copied with its names sorted (as the node lists them). */
function checkedProps(jobName: string, props: unknown): Readonly<Record<string, string>> {
  if (props === undefined) return {};
  if (typeof props !== 'object' || props === null || Array.isArray(props))
    fail(jobName, 'props', `must be an object of string names to string values, got ${JSON.stringify(props)}`);
  const entries = Object.entries(props as Record<string, unknown>);
  if (entries.length > MAX_PROPS) fail(jobName, 'props', `has ${entries.length} properties; at most ${MAX_PROPS}`);
  for (const [name, value] of entries) {
    if (name === '' || name.length > MAX_PROP_NAME_LENGTH)
      fail(jobName, 'props', `names must be 1..${MAX_PROP_NAME_LENGTH} characters, got ${JSON.stringify(name)}`);
    if (typeof value !== 'string')
      fail(
        jobName,
        `props.${name}`,
        `must be a string (Java keeps properties as strings), got ${JSON.stringify(value)}`,
      );
  }
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) as Record<string, string>;
}
