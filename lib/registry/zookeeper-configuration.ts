/** ZooKeeper connection settings; names follow ElasticJob's `ZookeeperConfiguration`. @publicApi */
export interface ZookeeperConfiguration {
  /**
   * Comma-separated `host:port` list, e.g. `"127.0.0.1:2181,127.0.0.1:2182"`. Default: the environment variable
   * `ZK_CONNECT`, as the command line reads it (`npx nestjs-elastic-job zookeeper` prints one for development).
   */
  serverLists?: string;
  /** Root node of every job path (`/{namespace}/{jobName}`); a node name, or several joined by `/`. */
  namespace: string;
  /** Requested session timeout; the server clamps it to [2, 20] × its tickTime. Default 60000. */
  sessionTimeoutMilliseconds?: number;
  /**
   * How long bootstrap waits for the first connection before going on and registering in the background (the app's
   * `init()` / `listen()` returns that much later when ZooKeeper is down; logged when the wait begins), and how long
   * an operator call waits for a connection. Default 15000.
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
