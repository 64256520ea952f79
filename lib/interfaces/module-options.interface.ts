/** ZooKeeper connection settings; names follow ElasticJob's `ZookeeperConfiguration`. @publicApi */
export interface ZookeeperConfiguration {
  /** Comma-separated `host:port` list, e.g. `"127.0.0.1:2181,127.0.0.1:2182"`. */
  serverLists: string;
  /** Root node of every job path (`/{namespace}/{jobName}`); a node name, or several joined by `/`. */
  namespace: string;
  /** Requested session timeout; the server clamps it to [2, 20] × its tickTime. Default 60000. */
  sessionTimeoutMilliseconds?: number;
  /**
   * How long bootstrap waits for the first connection before going on and registering in the background. Default 15000.
   */
  connectionTimeoutMilliseconds?: number;
  /** First retry delay of coordination operations (doubles per retry). Default 1000. */
  baseSleepTimeMilliseconds?: number;
  /** Cap of the retry delay. Default 3000. */
  maxSleepTimeMilliseconds?: number;
  /** Retries of a failed coordination step before it is logged and left for the next firing. Default 3. */
  maxRetries?: number;
  /**
   * `"user:password"`: authenticates with ZooKeeper's digest scheme and puts a creator-only ACL on every created node.
   */
  digest?: string;
}

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
}

/**
 * Options of `ElasticJobModule.forRoot()` / `forRootAsync()`: `zookeeper` is required, unless `enabled` is false
 * (a test module needs no ZooKeeper settings). @publicApi
 */
export type ElasticJobModuleOptions =
  | (ElasticJobModuleCommonOptions & { zookeeper: ZookeeperConfiguration })
  | (ElasticJobModuleCommonOptions & { zookeeper?: ZookeeperConfiguration; enabled: false });
