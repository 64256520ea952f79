import { randomBytes } from 'node:crypto';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Observable, Subject, takeUntil } from 'rxjs';
import { describeError, JobConfigurationError, JobNotFoundError } from '../errors/elastic-job.errors.js';
import { ElasticJobEventBus } from '../events/elastic-job-event-bus.js';
import { ElasticJobRegistry } from '../elastic-job.registry.js';
import type { JobConfigurationChanges } from '../lifecycle/job-configuration.api.js';
import type { JobConfiguration } from '../job/config/job-configuration.js';
import type { ExecutionHistory, ExecutionHistoryQuery } from '../interfaces/execution-history.interface.js';
import { ElasticJobOperator } from '../lifecycle/elastic-job-operator.js';
import { JOB_BRIEF_STATUSES, type JobBriefStatus, type ShardingInfo } from '../lifecycle/lifecycle.types.js';
import type { NamespaceChange } from '../lifecycle/namespace-watch.js';
import { CONSOLE_OPTIONS, type ResolvedConsoleOptions } from './console-options.js';
import { ExecutionsCheck } from './executions-check.js';
import { JobRows, withSchedule } from './job-rows.js';
import type {
  ConsoleChange,
  ConsoleExecutions,
  ConsoleJobDetail,
  ConsoleJobRow,
  ConsoleJobsPage,
} from './model/console-model.js';
import { NamespaceFollower } from './namespace-follower.js';

export type { ConsoleChange, ConsoleExecutions, ConsoleJobDetail, ConsoleJobRow, ConsoleJobsPage };

/** How long the console waits for the instances' logs (those that have not answered by then are named). */
const CLUSTER_HISTORY_TIMEOUT_MS = 3000;

/**
 * The console's view of the namespace, in three parts with a state value each: the job rows (job-rows.ts: read
 * again only for the jobs the watch says changed), the namespace watch (namespace-follower.ts: started by the first
 * request, retried by the next, closed when idle) and the executions check (executions-check.ts: while a page
 * listens). This service wires them to the routes and tells the listening pages what changed.
 */
@Injectable()
export class ConsoleStateService implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('ElasticJob:console');
  private readonly changes = new Subject<ConsoleChange>();
  /** Ends every live stream before the HTTP server closes: it waits for open connections, an SSE one included. */
  private readonly shuttingDown = new Subject<void>();
  /** Emits once, when the app begins to shut down: every live stream ends on it. */
  readonly stopping: Observable<void> = this.shuttingDown.asObservable();
  private readonly rows = new JobRows(() => this.operator);
  private readonly follower = new NamespaceFollower(
    () => this.operator,
    (change) => this.onChange(change),
    () => this.rows.markAll(),
    () => this.listeners,
    this.logger,
  );
  private executionsCheck: ExecutionsCheck | undefined;
  private history: ExecutionHistory | undefined;
  /** Pages listening to the live stream now. */
  private listeners = 0;
  private closed = false;

  private operatorOfApp: ElasticJobOperator | undefined;
  private eventBus: ElasticJobEventBus | undefined;
  private instanceId = '';

  constructor(
    @Inject(CONSOLE_OPTIONS) readonly options: ResolvedConsoleOptions,
    @Inject(ModuleRef) private readonly moduleRef: ModuleRef,
  ) {}

  /** The app's operator API (ElasticJobModule's), found wherever the app imports it. */
  get operator(): ElasticJobOperator {
    return this.operatorOfApp!;
  }

  onModuleInit(): void {
    try {
      this.operatorOfApp = this.moduleRef.get(ElasticJobOperator, { strict: false });
    } catch {
      throw new JobConfigurationError(
        undefined,
        'console',
        'ElasticJobConsoleModule needs ElasticJobModule in the same app: import ElasticJobModule.forRoot() too',
        'ElasticJobConsoleModule',
      );
    }
    // Both come with ElasticJobModule, found above: the audit event goes where the app's jobs publish theirs.
    this.eventBus = this.moduleRef.get(ElasticJobEventBus, { strict: false });
    this.instanceId = this.moduleRef.get(ElasticJobRegistry, { strict: false }).instanceId;
    const token = this.options.executionHistory;
    if (token === undefined) return;
    let history: unknown;
    try {
      history = this.moduleRef.get(token, { strict: false });
    } catch (error) {
      throw new JobConfigurationError(
        undefined,
        'console.executionHistory',
        `no provider ${String(typeof token === 'function' ? token.name : token)} in the app (${describeError(error)}): ` +
          'add postgresTracing() to the providers of the module that imports the console',
        'ElasticJobConsoleModule',
      );
    }
    if (typeof (history as ExecutionHistory | undefined)?.recentExecutions !== 'function')
      throw new JobConfigurationError(
        undefined,
        'console.executionHistory',
        'the provider has no recentExecutions(query) method (ExecutionHistory)',
        'ElasticJobConsoleModule',
      );
    this.history = history as ExecutionHistory;
    this.executionsCheck = new ExecutionsCheck(
      this.history,
      () => this.changes.next({ type: 'executions' }),
      this.logger,
    );
  }

  beforeApplicationShutdown(): void {
    this.closed = true;
    this.shuttingDown.next();
    this.shuttingDown.complete();
    this.changes.complete();
    this.follower.close();
    this.executionsCheck?.stop();
  }

  onApplicationShutdown(): void {
    this.beforeApplicationShutdown(); // idempotent; for apps whose shutdown skips the first hook
  }

  /** A fresh token for a page: sent back with its actions, beside the cookie the page is given (double submit). */
  newCsrfToken(): string {
    return randomBytes(24).toString('base64url');
  }

  /** The live changes, for one page; starting the watch if it is not running. */
  listen(): Observable<ConsoleChange> {
    return new Observable<ConsoleChange>((subscriber) => {
      if (this.closed) return subscriber.complete();
      const subscription = this.changes.subscribe(subscriber);
      // First, whether changes will come: the page shows "live" only once the watch is there.
      void this.follower
        .ensure()
        .then(() => subscriber.next({ type: 'connection', connected: this.follower.following }));
      this.listeners++;
      this.executionsCheck?.start();
      return () => {
        subscription.unsubscribe();
        this.follower.touch();
        if (--this.listeners === 0) this.executionsCheck?.stop();
      };
    }).pipe(takeUntil(this.shuttingDown));
  }

  async jobs(query: { name?: string; status?: string; offset: number; limit: number }): Promise<ConsoleJobsPage> {
    await this.follower.ensure();
    const rows = await this.rows.current(this.follower.following);
    const counts = Object.fromEntries(JOB_BRIEF_STATUSES.map((status) => [status, 0])) as Record<
      JobBriefStatus,
      number
    >;
    const needle = query.name?.trim().toLowerCase() ?? '';
    const matching: ConsoleJobRow[] = [];
    for (const row of rows) {
      counts[row.status]++;
      if (needle !== '' && !row.jobName.toLowerCase().includes(needle)) continue;
      if (query.status && row.status !== query.status) continue;
      matching.push(row);
    }
    const jobs = matching.slice(query.offset, query.offset + query.limit);
    return { total: matching.length, offset: query.offset, limit: query.limit, counts, jobs };
  }

  /** Undefined when the namespace has no such job. */
  async job(jobName: string): Promise<ConsoleJobDetail | undefined> {
    await this.follower.ensure();
    const [brief, config, sharding, servers] = await Promise.all([
      this.operator.getJobBriefInfo(jobName),
      this.operator.getJobConfiguration(jobName),
      // Removed between the reads: the brief says so below.
      this.operator.getShardingInfo(jobName).catch((error: unknown): ShardingInfo[] => {
        if (error instanceof JobNotFoundError) return [];
        throw error;
      }),
      this.operator.getJobServersInfo(jobName),
    ]);
    if (brief === undefined || config === undefined) return undefined;
    const row = withSchedule(brief, config.timeZone);
    this.rows.remember(row);
    return {
      job: row,
      config: {
        shardingItemParameters: config.shardingItemParameters,
        jobParameter: config.jobParameter,
        failover: config.failover,
        misfire: config.misfire,
        monitorExecution: config.monitorExecution,
        jobShardingStrategyType: config.jobShardingStrategyType,
        overwrite: config.overwrite,
        maxTimeDiffSeconds: config.maxTimeDiffSeconds,
      },
      sharding,
      servers: servers ?? [],
    };
  }

  /**
   * Writes a configuration change (validated as `@ShardedJob()` options, written as ElasticJob's
   * JobConfigurationAPI writes it), then tells who changed what: a log line and a `config.changed` event.
   */
  async updateConfiguration(
    jobName: string,
    changes: JobConfigurationChanges,
    by: string | undefined,
  ): Promise<{ configuration: JobConfiguration; changed: Record<string, { before: unknown; after: unknown }> }> {
    const before = await this.operator.getJobConfiguration(jobName);
    if (before === undefined) throw new JobNotFoundError(jobName);
    const configuration = await this.operator.updateJobConfiguration(jobName, changes);
    const changed: Record<string, { before: unknown; after: unknown }> = {};
    for (const field of Object.keys(changes) as Array<keyof JobConfigurationChanges>) {
      if (before[field] !== configuration[field])
        changed[field] = { before: before[field], after: configuration[field] };
    }
    this.rows.mark([jobName]);
    if (Object.keys(changed).length > 0) {
      const fields = Object.entries(changed)
        .map(([field, { before: was, after: is }]) => `${field} ${JSON.stringify(was)} -> ${JSON.stringify(is)}`)
        .join(', ');
      new Logger(`ElasticJob:${jobName}`).log(
        `configuration changed in the console by ${by ?? 'an unnamed user'}: ${fields}`,
      );
      this.eventBus?.publish({
        type: 'config.changed',
        jobName,
        instanceId: this.instanceId,
        at: new Date(),
        by,
        via: 'console',
        changes: changed,
      });
    }
    return { configuration, changed };
  }

  /**
   * Executions matching `query`: from the app's store (`executionHistory`, PostgreSQL) when it has one, or else from
   * every instance's in-memory log, asked through ZooKeeper (ElasticJobOperator.getExecutions), with which instances
   * answered.
   */
  async executions(query: ExecutionHistoryQuery): Promise<ConsoleExecutions> {
    if (this.history) return { source: 'database', executions: await this.history.recentExecutions(query) };
    const answer = await this.operator.getExecutions(query, { timeoutMs: CLUSTER_HISTORY_TIMEOUT_MS });
    return { source: 'cluster', ...answer };
  }

  /** Where the page's executions come from. */
  get historySource(): ConsoleExecutions['source'] {
    return this.history ? 'database' : 'cluster';
  }

  /** After an action: the page sees its effect through the watch; rows are read again at once regardless. */
  touched(jobName: string | undefined): void {
    if (jobName === undefined) this.rows.markAll();
    else this.rows.mark([jobName]);
  }

  private onChange(change: NamespaceChange): void {
    if (change.kind === 'jobs') {
      this.rows.mark(change.jobNames);
      this.changes.next({ type: 'jobs', jobNames: change.jobNames });
    } else if (change.kind === 'resync') {
      this.rows.markAll();
      this.changes.next({ type: 'resync' });
    } else {
      this.changes.next({ type: 'connection', connected: change.connected });
    }
  }
}
