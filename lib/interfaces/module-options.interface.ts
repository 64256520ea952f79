import type { ShardedJobOptions } from './sharded-job-options.interface.js';
import type { ZookeeperConfiguration } from '../registry/zookeeper-configuration.js';
import type { WorkflowOptions } from './workflow-options.interface.js';

// Defined by the registry, which connects with it; part of the module's options.
export type { ZookeeperConfiguration };

/** What every form of the module's options has. @publicApi */
export interface ElasticJobModuleCommonOptions {
  instance?: {
    /** The IP this instance registers under (`servers/{ip}`, `instances/{ip}@-@{pid}`); default: detected. */
    ip?: string;
  };
  /** How long shutdown waits for running items before aborting their `signal`. Default 30000. */
  shutdownTimeoutMilliseconds?: number;
  /**
   * `false`: no ZooKeeper session, nothing scheduled, nothing written; the jobs are still discovered and validated,
   * and `ElasticJobRegistry.runJob()` runs a handler with a given item. For tests of apps that import the module
   * (say `enabled: process.env.NODE_ENV !== 'test'` in forRootAsync). Default true.
   */
  enabled?: boolean;
  /**
   * This instance keeps its last `size` item executions in memory (start, end, result, error and stack, source), for
   * `ElasticJobRegistry.recentExecutions()` and the console's history and failures views, which ask every instance
   * through ZooKeeper: no database needed (docs/guide/console.md, "Execution history without a database").
   * Default `{ size: 500 }`; `false` keeps none.
   */
  executionLog?: { size?: number } | false;
  /**
   * Jobs that need no provider: ElasticJob's typed jobs, HTTP (each item a request) and SCRIPT (each item a command),
   * defined by their `props` (docs/guide/http-and-script-jobs.md). Also at run time: `ElasticJobRegistry.addJob()`.
   */
  jobs?: TypedJobOptions[];
  /**
   * Which commands SCRIPT jobs may run on this instance. Off by default: whoever can write a job's config node could
   * otherwise run any command on every instance. `{ allow: true }` runs any; `{ allow: ['/opt/jobs/export.sh'] }`
   * only those (the command line's first word, as written). A SCRIPT job this instance may not run is not registered
   * here (an error says so), so its items go to instances that allow it.
   */
  scriptJobs?: { allow: boolean | string[] };
  /**
   * Workflows: one-off jobs of this app run as a graph, a step starting once every item of the steps it waits for has
   * succeeded across the cluster (docs/guide/workflows.md).
   */
  workflows?: WorkflowOptions[];
}

/**
 * A typed job: its type and `props` instead of a provider method (docs/guide/http-and-script-jobs.md). Declared with
 * `{ jobName, type }` only, it joins the job stored in ZooKeeper (say a Java team's) and takes all the rest from there.
 * @publicApi
 */
export interface TypedJobOptions extends Omit<ShardedJobOptions, 'shardingTotalCount'> {
  type: 'HTTP' | 'SCRIPT';
  /** Required unless the job is joined by `{ jobName, type }` alone. */
  shardingTotalCount?: number;
  /** The executor's settings: `http.uri`, `http.method`, ... or `script.command.line`. */
  props?: Readonly<Record<string, string>>;
}

/**
 * Options of `ElasticJobModule.forRoot()` / `forRootAsync()`: `zookeeper` is required, unless `enabled` is false
 * (a test module needs no ZooKeeper settings). @publicApi
 */
export type ElasticJobModuleOptions =
  | (ElasticJobModuleCommonOptions & { zookeeper: ZookeeperConfiguration })
  | (ElasticJobModuleCommonOptions & { zookeeper?: ZookeeperConfiguration; enabled: false });
