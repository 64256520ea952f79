import type { ShardingContext } from './sharding-context.interface.js';

/** One live instance of a job, as registered under `instances/`. @publicApi */
export interface JobInstance {
  /** `{ip}@-@{pid}` */
  jobInstanceId: string;
  serverIp: string;
}

/** Built-in sharding strategies (ElasticJob's names and algorithms, golden vectors included). @publicApi */
export type ShardingStrategyType = 'AVG_ALLOCATION' | 'ODEVITY' | 'ROUND_ROBIN';

/**
 * A custom sharding strategy. `instances` come in ElasticJob's order (descending instance id); return, for each
 * instance id, the items it owns. Every item in [0, shardingTotalCount) must be given to exactly one instance.
 * @publicApi
 */
export interface JobShardingStrategy {
  /** Written to the job's config node as `jobShardingStrategyType`. */
  readonly type: string;
  sharding(instances: readonly JobInstance[], jobName: string, shardingTotalCount: number): Map<string, number[]>;
}

/**
 * Built-in error handlers: LOG (default) logs the error; THROW fails the firing; IGNORE does nothing; EMAIL, WECHAT
 * (WeCom's group robot), DINGTALK (DingTalk's robot) and WEBHOOK (a JSON POST) log it and send an alert, configured by
 * the job's `props` (docs/guide/alerts.md). WEBHOOK is this library's own: a Java ElasticJob instance refuses a job
 * naming it. @publicApi
 */
export type ErrorHandlerType = 'LOG' | 'THROW' | 'IGNORE' | 'EMAIL' | 'WECHAT' | 'DINGTALK' | 'WEBHOOK';

/**
 * A custom error handler, called once per failed item. Whatever it throws is logged, never crashes the app. @publicApi
 */
export interface JobErrorHandler {
  /** Written to the job's config node as `jobErrorHandlerType`. */
  readonly type: string;
  handleException(jobName: string, error: unknown, context: ShardingContext): void | Promise<void>;
}

/**
 * Retries of a failed item inside its firing, on the instance that owns it (docs/guide/item-policies.md), as BullMQ's
 * `attempts` and `backoff`. @publicApi
 */
export interface ItemRetryOptions {
  /** Every run of the item, the first included (BullMQ's count): 3 = the run and two retries. 1..100. */
  attempts: number;
  /** `fixed` (default): the delay each time; `exponential`: delay, 2 × delay, 4 × delay... */
  backoff?: 'fixed' | 'exponential';
  /** The wait before the first retry, in ms. Default 0. */
  delayMilliseconds?: number;
  /** The longest wait, in ms; 0 (default) = no cap. */
  maxDelayMilliseconds?: number;
  /** 0..1: each wait drawn at random in [wait × (1 − jitter), wait]. Default 0. */
  jitter?: number;
}

/**
 * `@ShardedJob()` options; fields, names and defaults mirror ElasticJob's `JobConfiguration`. @publicApi
 */
export interface ShardedJobOptions {
  /** Unique in the namespace; the ZooKeeper node `/{namespace}/{jobName}`. */
  jobName: string;
  /**
   * 6 fields are read seconds first (`*\/5 * * * * *`: every 5 seconds), 5 fields minute first (`*\/5 * * * *`: every
   * 5 minutes). Quartz's `?` is read as `*`. Day-of-week 0 or 7 = Sunday.
   * Stored in ZooKeeper in Quartz's dialect, so restricting both day-of-month and day-of-week is refused.
   * Required, except for a one-off job (`oneOff: true`), which has none.
   */
  cron?: string;
  /** IANA time zone of the cron, e.g. `Europe/Berlin`. Default: the process's. */
  timeZone?: string;
  /** Number of sharding items per firing, > 0. */
  shardingTotalCount: number;
  /** Item parameters: `"0=a,1=b"` or `{ 0: 'a', 1: 'b' }`. */
  shardingItemParameters?: string | Readonly<Record<number, string>>;
  /** Passed to every item as `jobParameter`. Default ''. */
  jobParameter?: string;
  /** Write `sharding/{i}/running` while an item runs, so no firing starts it twice. Default true. */
  monitorExecution?: boolean;
  /** Re-run on a live instance the items a crashed instance was running. Default false. */
  failover?: boolean;
  /** Run once more, right after, the firing that found its items still running. Default true. */
  misfire?: boolean;
  /** Largest tolerated clock difference with ZooKeeper, in seconds; -1 = no check. Default -1. */
  maxTimeDiffSeconds?: number;
  /** Check the sharding against live instances every N minutes; 0 = never. Default 10. */
  reconcileIntervalMinutes?: number;
  /**
   * Default 'AVG_ALLOCATION'. A built-in name, a strategy object, or the name of a provider decorated with
   * `@ElasticJobShardingStrategy(name)`.
   */
  jobShardingStrategyType?: ShardingStrategyType | JobShardingStrategy | (string & {});
  /**
   * Default 'LOG'. A built-in name, a handler object, or the name of a provider decorated with
   * `@ElasticJobErrorHandler(name)`.
   */
  jobErrorHandlerType?: ErrorHandlerType | JobErrorHandler | (string & {});
  description?: string;
  /** Register this instance's server as DISABLED: it takes no items. Default false. */
  disabled?: boolean;
  /** Write this configuration over the one in ZooKeeper. Default false: ZooKeeper's wins once written. */
  overwrite?: boolean;
  /** Keep the existing sharding when instances join or leave. Default false. */
  staticSharding?: boolean;
  /**
   * The job's identity, stored in its root node `/{namespace}/{jobName}`: an app whose job of the same name has
   * another identity is refused (JobConflictError), as ElasticJob refuses a job of another class. Default
   * `ClassName.methodName` of the decorated method. To share a job with Java ElasticJob instances, give the Java
   * job's fully qualified class name, e.g. `'com.acme.ReportJob'` (docs/interop-java.md).
   */
  jobClass?: string;
  /**
   * ElasticJob's job properties: the settings of a typed job's executor (`http.uri`, `script.command.line`, ...:
   * docs/guide/http-and-script-jobs.md), kept in the config node's `props` map as Java keeps them. Names and values
   * are strings.
   */
  props?: Readonly<Record<string, string>>;
  /**
   * At most this many of the job's items run at once in this process (ElasticJob's executor pool size, here a
   * number); the others of the same firing wait their turn. Default: no cap (every item of a firing at once). Kept
   * in this process only: not written to the config node (a Java instance would refuse an unknown key).
   */
  maxConcurrentItems?: number;
  /**
   * A one-off job (ElasticJob's OneOffJobBootstrap): no `cron`; it runs across the cluster only when triggered
   * (`trigger()`, the CLI, the operator API, a message pattern), each live instance running its items once per
   * trigger. Its config node has no cron, as ElasticJob writes it.
   */
  oneOff?: boolean;
  /**
   * An item still running this long (ms) is aborted: its signal aborts with an ItemTimeoutError, it fails with it
   * (error handler, events, history), and its running marker goes at once so that the next firing runs on time
   * (docs/guide/item-policies.md, "Timeout"). Default 0: none. Stored in `props` (`item.timeout.milliseconds`).
   */
  itemTimeoutMilliseconds?: number;
  /** Retries of a failed item inside its firing (docs/guide/item-policies.md, "Retries"). Stored in `props` (`item.retry.*`). */
  retry?: ItemRetryOptions;
  /**
   * What a firing does when this instance's items of the previous one still run: `misfire` (default), ElasticJob's
   * (see `misfire`); `cover-early`, XXL-JOB's COVER_EARLY: abort them and start the new ones. Stored in `props`
   * (`item.overlap`).
   */
  overlap?: 'misfire' | 'cover-early';
}
