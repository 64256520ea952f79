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
import {
  describeError,
  JobConfigurationError,
  JobNotFoundError,
  StoredConfigurationError,
} from '../errors/elastic-job.errors.js';
import type { ExecutionHistory, ExecutionRecord } from '../interfaces/execution-history.interface.js';
import { ElasticJobOperator } from '../lifecycle/elastic-job-operator.js';
import {
  JOB_BRIEF_STATUSES,
  type JobBriefInfo,
  type JobBriefStatus,
  type JobServerInfo,
  type ShardingInfo,
} from '../lifecycle/lifecycle.types.js';
import { mapBounded } from '../registry/request-limits.js';
import type { NamespaceChange } from '../lifecycle/namespace-watch.js';
import { upcomingFireTimes } from '../schedule/cron-preview.js';
import { CONSOLE_OPTIONS, type ResolvedConsoleOptions } from './console-options.js';

/** A row of the jobs list: ElasticJob's JobBriefInfo, with the zone and next fire time of its cron. */
export interface ConsoleJobRow extends JobBriefInfo {
  timeZone: string | undefined;
  /** ISO instant; undefined for a one-off job or a cron that cannot be read. */
  nextFireTime: string | undefined;
}

export interface ConsoleJobsPage {
  total: number;
  offset: number;
  limit: number;
  /** Jobs per status over the whole namespace, for the filter. */
  counts: Record<JobBriefStatus, number>;
  jobs: ConsoleJobRow[];
}

export interface ConsoleJobDetail {
  job: ConsoleJobRow;
  /** The configuration fields the page shows (no secrets are kept in a job's configuration). */
  config: {
    shardingItemParameters: string;
    jobParameter: string;
    failover: boolean;
    misfire: boolean;
    monitorExecution: boolean;
    jobShardingStrategyType: string | undefined;
    overwrite: boolean;
  };
  sharding: ShardingInfo[];
  servers: JobServerInfo[];
}

/** What the page is told over its live stream. */
export type ConsoleChange =
  | { type: 'jobs'; jobNames: readonly string[] }
  | { type: 'resync' }
  | { type: 'connection'; connected: boolean }
  | { type: 'executions' };

/** Reads in flight at once when many jobs changed: the session stays free for the app's own jobs. */
const READ_CONCURRENCY = 16;
/** While someone watches, how often the executions store is asked whether there is something new. */
const EXECUTIONS_CHECK_MS = 2_000;
/** With no page listening for this long, the namespace watch is closed (every write in it would be sent to us). */
const WATCH_IDLE_MS = 5 * 60_000;

/**
 * The console's view of the namespace: job rows kept between requests and read again only for the jobs a ZooKeeper
 * watch says changed (so a page of 1000 jobs costs reads for what moved, not for everything), and the changes told
 * to the pages that listen. The watch starts with the first request and is retried by the next one when it fails.
 */
@Injectable()
export class ConsoleStateService implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('ElasticJob:console');
  private readonly changes = new Subject<ConsoleChange>();
  /** Ends every live stream before the HTTP server closes: it waits for open connections, an SSE one included. */
  private readonly shuttingDown = new Subject<void>();
  /** Emits once, when the app begins to shut down: every live stream ends on it. */
  readonly stopping: Observable<void> = this.shuttingDown.asObservable();
  private lastUse = Date.now();
  private idleTimer: NodeJS.Timeout | undefined;
  private watchWarned = false;
  private readonly rows = new Map<string, ConsoleJobRow>();
  private readonly dirty = new Set<string>();
  private everythingDirty = true;
  private refreshing: Promise<void> | undefined;
  private watch: { close(): void } | undefined;
  private watchStarting: Promise<void> | undefined;
  private history: ExecutionHistory | undefined;
  private listeners = 0;
  private executionsTimer: NodeJS.Timeout | undefined;
  private lastExecutionId: string | undefined;
  private closed = false;

  private operatorOfApp: ElasticJobOperator | undefined;

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
  }

  beforeApplicationShutdown(): void {
    this.closed = true;
    this.shuttingDown.next();
    this.shuttingDown.complete();
    this.changes.complete();
    this.closeWatch();
    clearInterval(this.executionsTimer);
    clearInterval(this.idleTimer);
  }

  onApplicationShutdown(): void {
    this.beforeApplicationShutdown(); // idempotent; for apps whose shutdown skips the first hook
  }

  /** A fresh token for a page: sent back with its actions, beside the cookie the page is given (double submit). */
  newCsrfToken(): string {
    return randomBytes(24).toString('base64url');
  }

  get hasHistory(): boolean {
    return this.history !== undefined;
  }

  /** The live changes, for one page; starting the watch if it is not running. */
  listen(): Observable<ConsoleChange> {
    return new Observable<ConsoleChange>((subscriber) => {
      if (this.closed) return subscriber.complete();
      const subscription = this.changes.subscribe(subscriber);
      // First, whether changes will come: the page shows "live" only once the watch is there.
      void this.ensureWatch().then(() => subscriber.next({ type: 'connection', connected: this.watch !== undefined }));
      this.listeners++;
      this.startExecutionsCheck();
      return () => {
        subscription.unsubscribe();
        this.lastUse = Date.now();
        if (--this.listeners === 0) {
          clearInterval(this.executionsTimer);
          this.executionsTimer = undefined;
        }
      };
    }).pipe(takeUntil(this.shuttingDown));
  }

  async jobs(query: { name?: string; status?: string; offset: number; limit: number }): Promise<ConsoleJobsPage> {
    await this.ensureWatch();
    await this.refresh();
    const counts = Object.fromEntries(JOB_BRIEF_STATUSES.map((status) => [status, 0])) as Record<
      JobBriefStatus,
      number
    >;
    const needle = query.name?.trim().toLowerCase() ?? '';
    const matching: ConsoleJobRow[] = [];
    for (const row of [...this.rows.values()].sort((a, b) => (a.jobName < b.jobName ? -1 : 1))) {
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
    await this.ensureWatch();
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
    this.rows.set(jobName, row);
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
      },
      sharding,
      servers: servers ?? [],
    };
  }

  /** Undefined when no execution history is configured. */
  async executions(query: { jobName?: string; limit: number }): Promise<ExecutionRecord[] | undefined> {
    if (!this.history) return undefined;
    return this.history.recentExecutions(query);
  }

  /** After an action: the page sees its effect through the watch; rows are read again at once regardless. */
  touched(jobName: string | undefined): void {
    if (jobName === undefined) this.everythingDirty = true;
    else this.dirty.add(jobName);
  }

  private async ensureWatch(): Promise<void> {
    this.lastUse = Date.now();
    if (this.watch || this.closed) return;
    this.watchStarting ??= this.operator
      .watch((change) => this.onChange(change))
      .then(
        (watch) => {
          if (this.closed) return watch.close();
          this.watch = watch;
          this.watchWarned = false;
          // Anything may have changed while there was no watch.
          this.everythingDirty = true;
          this.idleTimer ??= setInterval(() => this.closeWatchWhenIdle(), 60_000);
          this.idleTimer.unref();
        },
        (error: unknown) => {
          // Said once until it works again: every request tries, and ZooKeeper may be away for a while.
          if (!this.watchWarned)
            this.logger.warn(`cannot follow ZooKeeper's changes yet (reading everything): ${describeError(error)}`);
          this.watchWarned = true;
        },
      )
      .finally(() => (this.watchStarting = undefined));
    await this.watchStarting;
  }

  private closeWatchWhenIdle(): void {
    if (this.listeners === 0 && Date.now() - this.lastUse > WATCH_IDLE_MS) this.closeWatch();
  }

  private closeWatch(): void {
    this.watch?.close();
    this.watch = undefined;
    clearInterval(this.idleTimer);
    this.idleTimer = undefined;
  }

  private onChange(change: NamespaceChange): void {
    if (change.kind === 'jobs') {
      for (const name of change.jobNames) this.dirty.add(name);
      this.changes.next({ type: 'jobs', jobNames: change.jobNames });
    } else if (change.kind === 'resync') {
      this.everythingDirty = true;
      this.changes.next({ type: 'resync' });
    } else {
      this.changes.next({ type: 'connection', connected: change.connected });
    }
  }

  /** One refresh at a time; requests meanwhile share it. */
  private refresh(): Promise<void> {
    if (this.watch && !this.everythingDirty && this.dirty.size === 0) return Promise.resolve();
    this.refreshing ??= this.readChanged().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async readChanged(): Promise<void> {
    // Without a watch nothing tells us what changed: read everything every time.
    if (this.everythingDirty || !this.watch) {
      this.everythingDirty = false;
      this.dirty.clear();
      try {
        const all = await this.operator.getAllJobsBriefInfo();
        const names = new Set(all.map((brief) => brief.jobName));
        for (const name of this.rows.keys()) if (!names.has(name)) this.rows.delete(name);
        await mapBounded(
          all,
          async (brief) => void this.rows.set(brief.jobName, await this.readSchedule(brief)),
          READ_CONCURRENCY,
        );
      } catch (error) {
        this.everythingDirty = true; // read again by the next request
        throw error;
      }
      return;
    }
    const names = [...this.dirty];
    this.dirty.clear();
    try {
      await mapBounded(
        names,
        async (name) => {
          const row = await this.readRow(name);
          if (row === undefined) this.rows.delete(name);
          else this.rows.set(name, row);
        },
        READ_CONCURRENCY,
      );
    } catch (error) {
      for (const name of names) this.dirty.add(name);
      throw error;
    }
  }

  private async readRow(jobName: string): Promise<ConsoleJobRow | undefined> {
    const brief = await this.operator.getJobBriefInfo(jobName);
    return brief === undefined ? undefined : this.readSchedule(brief);
  }

  /** The row of a job whose brief is known: the zone is in the configuration only (JobBriefInfo has the cron). */
  private async readSchedule(brief: JobBriefInfo): Promise<ConsoleJobRow> {
    try {
      return withSchedule(brief, (await this.operator.getJobConfiguration(brief.jobName))?.timeZone);
    } catch (error) {
      // One job's unreadable config node must not take the whole list down: its row shows no zone.
      if (!(error instanceof StoredConfigurationError)) throw error;
      return withSchedule(brief, undefined);
    }
  }

  /**
   * ZooKeeper says nothing about the tracing store: while a page listens, the newest 20 executions are read every
   * 2 s and a change (a new one, one completed) told (one small query, only with a listener).
   */
  private startExecutionsCheck(): void {
    if (!this.history || this.executionsTimer) return;
    const history = this.history;
    let checking = false;
    this.executionsTimer = setInterval(() => {
      if (checking) return;
      checking = true;
      history
        .recentExecutions({ limit: 20 })
        .then((newest) => {
          const id = newest.map((execution) => `${execution.id}:${String(execution.success)}`).join(',');
          if (id !== this.lastExecutionId) {
            this.lastExecutionId = id;
            this.changes.next({ type: 'executions' });
          }
        })
        .catch((error: unknown) => this.logger.debug(`executions check failed: ${describeError(error)}`))
        .finally(() => (checking = false));
    }, EXECUTIONS_CHECK_MS);
    this.executionsTimer.unref();
  }
}

/** A jobs-list row: the brief, with the zone and the cron's next fire time in it. */
function withSchedule(brief: JobBriefInfo, timeZone: string | undefined): ConsoleJobRow {
  let nextFireTime: string | undefined;
  if (brief.cron) {
    try {
      nextFireTime = upcomingFireTimes(brief.cron, timeZone, 1, new Date())[0]?.toISOString();
    } catch {
      nextFireTime = undefined; // a stored cron this library cannot read: shown without a next time
    }
  }
  return { ...brief, timeZone, nextFireTime };
}
