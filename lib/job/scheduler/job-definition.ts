import type { PreparationLead } from '../../schedule/preparation-lead.js';
import type { ScriptPolicy } from '../plugins/script-item-executor.js';
import type { ExecutionLogReader } from '../history/execution-query-reactions.js';
import type { ItemLineBook } from '../policies/item-lines.js';
import type { DataflowJobHandler } from '../../interfaces/dataflow-job.interface.js';
import type { ItemInterceptor } from '../../interfaces/item-interceptor.interface.js';
import type { JobConfiguration } from '../config/job-configuration.js';
import type { JobEventSink } from '../events/job-event-publisher.js';
import type { JobHandler } from '../plugins/item-executor.js';
import type { CustomPlugins } from '../plugins/job-plugins.js';

/** A discovered `@ShardedJob()` method, validated. */
export interface JobDefinition {
  config: JobConfiguration;
  /**
   * The custom strategy and error handler objects its options gave, and the app's providers decorated as named
   * ones (every job may name any of them), registered under their type names.
   */
  plugins?: CustomPlugins;
  /** The job's identity (`jobClass`, default `ClassName.methodName`): stored in its root node, compared on join. */
  owner: string;
  /** The cron as the options wrote it (`config.cron` holds the form kept): a 5-field one's reading is logged. */
  writtenCron?: string;
  handler: JobHandler;
  /**
   * Declared with `{ jobName, type }` only (a typed job): it joins the job stored in ZooKeeper and takes its whole
   * configuration from there, props included; it never writes one.
   */
  joinsStored?: true;
  /** The job type, which chooses the item executor. Default 'SIMPLE' (the handler is called once per item). */
  type?: string;
  /** At most this many items at once in this process (`@ShardedJob({ maxConcurrentItems })`); no cap when undefined. */
  maxConcurrentItems?: number;
  /** A `@DataflowJob()` provider (type DATAFLOW): its fetch/process methods, and whether it streams. */
  dataflow?: { handler: DataflowJobHandler<unknown>; streaming: boolean };
}

export interface JobIdentity {
  ip: string;
  pid: number;
}

export interface JobSchedulerSettings {
  waitTimeoutMs: number;
  baseSleepTimeMs: number;
  maxSleepTimeMs: number;
  maxRetries: number;
  /** What a "minute" of `reconcileIntervalMinutes` lasts; 60000 except in tests. */
  reconcileMinuteMs?: number;
  /** How long an operator's shutdown waits for running items (their signal aborted) before cleaning up. */
  shutdownTimeoutMs?: number;
  /** Where the job's public events go (the module's ElasticJobEventBus); nowhere when not given. */
  eventSink?: JobEventSink;
  /** The app's item interceptors (a shared list, read at each item). */
  itemInterceptors?: readonly ItemInterceptor[];
  /** Which commands this instance's SCRIPT jobs may run (the module's `scriptJobs`); none when not given. */
  scriptPolicy?: ScriptPolicy;
  /** This process's in-memory execution log, answering the cluster's history queries; none when it is off. */
  executionLog?: ExecutionLogReader;
  /** Where items' kept lines are filed (the execution log's and a tracing database's); when not given, the log's. */
  lineBook?: ItemLineBook;
  /** How long before its instants a cron firing prepares; the process's (shared by its jobs) when not given. */
  preparationLead?: PreparationLead;
}
