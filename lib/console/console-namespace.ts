import type { Logger } from '@nestjs/common';
import { Observable, Subject } from 'rxjs';
import { describeError, JobNotFoundError } from '../errors/elastic-job.errors.js';
import type { ExecutionHistory, ExecutionHistoryQuery } from '../interfaces/execution-history.interface.js';
import type { ElasticJobOperator } from '../lifecycle/elastic-job-operator.js';
import type { ExecutionLinesAnswer } from '../lifecycle/item-state.api.js';
import { JOB_BRIEF_STATUSES, type JobBriefStatus, type ShardingInfo } from '../lifecycle/lifecycle.types.js';
import type { NamespaceChange } from '../lifecycle/namespace-watch.js';
import { ExecutionsCheck } from './executions-check.js';
import { upcomingFireTimes } from '../schedule/cron-preview.js';
import { JobRows, withSchedule } from './job-rows.js';
import type {
  ConsoleChange,
  ConsoleExecutions,
  ConsoleJobDetail,
  ConsoleJobRow,
  ConsoleJobsPage,
} from './model/console-model.js';
import { NamespaceFollower } from './namespace-follower.js';

/** How long the console waits for the instances' logs (those that have not answered by then are named). */
const CLUSTER_HISTORY_TIMEOUT_MS = 3000;

/** One registry and namespace the console shows: the app's own, or one of `registries`. */
export interface ConsoleNamespaceSource {
  /** `app` for the app's own; the entry's name otherwise. */
  name: string;
  operator: ElasticJobOperator;
  /** Whether the page may act on it (the app's: `actions`; another: its entry's `actions`). */
  actions: boolean;
  /** The app's tracing store: the app's own namespace only. */
  history?: ExecutionHistory;
  /** Closes what the console opened for it (another registry's session). */
  release?: () => Promise<void>;
}

/**
 * The console's view of one namespace, in three parts with a state value each: the job rows (job-rows.ts: read
 * again only for the jobs the watch says changed), the namespace watch (namespace-follower.ts: started by the first
 * request, retried by the next, closed when idle) and the executions check (executions-check.ts: while a page
 * listens, with a tracing store). It tells the pages listening to it what changed.
 */
export class ConsoleNamespace {
  readonly name: string;
  readonly operator: ElasticJobOperator;
  readonly actions: boolean;
  private readonly history: ExecutionHistory | undefined;
  private readonly changes = new Subject<ConsoleChange>();
  private readonly rows: JobRows;
  private readonly follower: NamespaceFollower;
  private readonly executionsCheck: ExecutionsCheck | undefined;
  /** Pages listening to the live stream now. */
  private listeners = 0;
  private closed = false;

  constructor(
    private readonly source: ConsoleNamespaceSource,
    private readonly logger: Logger,
  ) {
    this.name = source.name;
    this.operator = source.operator;
    this.actions = source.actions;
    this.history = source.history;
    this.rows = new JobRows(() => this.operator);
    this.follower = new NamespaceFollower(
      () => this.operator,
      (change) => this.onChange(change),
      () => this.rows.markAll(),
      () => this.listeners,
      logger,
    );
    this.executionsCheck =
      this.history && new ExecutionsCheck(this.history, () => this.changes.next({ type: 'executions' }), logger);
  }

  /** Where the page's executions come from. */
  get historySource(): ConsoleExecutions['source'] {
    return this.history ? 'database' : 'cluster';
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
    });
  }

  async jobs(query: { name?: string; status?: string; offset: number; limit: number }): Promise<ConsoleJobsPage> {
    // The watch is started beside the read, not before it: each waits up to the connection timeout for ZooKeeper,
    // and one after the other made an unreachable ZooKeeper's 503 come after twice the bound its message states.
    // Without the watch yet, every row is read (rows.current(false)); the watch, once started, marks them all again.
    const watching = this.follower.ensure();
    const rows = await this.rows.current(this.follower.following);
    await watching;
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
    const watching = this.follower.ensure(); // beside the reads, as in jobs()
    const [brief, config, sharding, servers] = await Promise.all([
      this.operator.getJobBriefInfo(jobName),
      this.operator.getJobConfiguration(jobName),
      // Removed between the reads: the brief says so below.
      // With the running items' progress, asked of their instances (none asked when no item runs).
      this.operator
        .getShardingInfo(jobName, { progress: true, timeoutMs: 1000 })
        .catch((error: unknown): ShardingInfo[] => {
          if (error instanceof JobNotFoundError) return [];
          throw error;
        }),
      this.operator.getJobServersInfo(jobName),
      watching,
    ]);
    if (brief === undefined || config === undefined) return undefined;
    const row = withSchedule(brief, config.timeZone);
    this.rows.remember(row);
    let nextFireTimes: string[] = [];
    try {
      if (brief.cron)
        nextFireTimes = upcomingFireTimes(brief.cron, config.timeZone, 5, new Date()).map((time) => time.toISOString());
    } catch {
      nextFireTimes = []; // a stored cron this library cannot read: none shown
    }
    return {
      job: row,
      nextFireTimes,
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
      props: config.props,
      sharding,
      servers: servers ?? [],
    };
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

  /**
   * One execution's kept lines (docs/guide/item-policies.md, "Item logs"): fetched when the page opens that execution,
   * never with the history. From the app's store when it keeps lines (a tracing database's JOB_EXECUTION_LINES);
   * else, or when it has none of that execution yet (its item still runs, its row waits in the writer's buffer) or
   * cannot answer, asked of the instance that ran it.
   */
  async executionLines(
    jobName: string,
    executionId: string,
    instance: string | undefined,
  ): Promise<ExecutionLinesAnswer> {
    if (this.history?.executionLines) {
      const stored = await this.history.executionLines(jobName, executionId).catch((error: unknown) => {
        this.logger.debug(`cannot read lines of execution ${executionId} from the store: ${describeError(error)}`);
        return undefined;
      });
      if (stored !== undefined) return { lines: stored, instanceId: undefined, missing: [] };
    }
    return this.operator.getExecutionLines(jobName, executionId, {
      ...(instance === undefined ? {} : { instance }),
      timeoutMs: CLUSTER_HISTORY_TIMEOUT_MS,
    });
  }

  /** After an action: the page sees its effect through the watch; rows are read again at once regardless. */
  touched(jobName: string | undefined): void {
    if (jobName === undefined) this.rows.markAll();
    else this.rows.mark([jobName]);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.changes.complete();
    this.follower.close();
    this.executionsCheck?.stop();
    await this.source.release?.();
  }

  private onChange(change: NamespaceChange): void {
    if (change.kind === 'jobs') {
      this.rows.mark(change.jobNames);
      this.changes.next({ type: 'jobs', jobNames: change.jobNames });
    } else if (change.kind === 'resync') {
      this.rows.markAll();
      this.changes.next({ type: 'resync' });
    } else if (change.kind === 'workflows') {
      this.changes.next({ type: 'workflows', workflows: change.workflows });
    } else {
      this.changes.next({ type: 'connection', connected: change.connected });
    }
  }
}
