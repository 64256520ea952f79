import { JobConfigurationError } from '../errors/elastic-job.errors.js';
import type { ZookeeperConfiguration } from './zookeeper-configuration.js';
import { nodeNameProblem, parseServerLists, RESERVED_ROOT_NODE } from './zookeeper-names.js';

/** ElasticJob's `ZookeeperConfiguration` defaults (its 0 timeouts mean Curator's 60 s session and 15 s connection). */
export const DEFAULT_ZOOKEEPER_SETTINGS = {
  sessionTimeoutMilliseconds: 60_000,
  connectionTimeoutMilliseconds: 15_000,
  baseSleepTimeMilliseconds: 1_000,
  maxSleepTimeMilliseconds: 3_000,
  maxRetries: 3,
} as const;

/** Every setting with its value: what the user gave, else the default. */
export type ZookeeperSettings = Required<Omit<ZookeeperConfiguration, 'digest'>> & { digest?: string };

/**
 * The one place ZooKeeper option defaults are merged (an `undefined` option takes the default too); `serverLists`
 * defaults to `ZK_CONNECT` (serverListsOf).
 */
export function resolveZookeeperSettings(config: ZookeeperConfiguration): ZookeeperSettings {
  const given = Object.fromEntries(Object.entries(config).filter(([, value]) => value !== undefined));
  return { ...DEFAULT_ZOOKEEPER_SETTINGS, ...given, serverLists: serverListsOf(config) ?? '' } as ZookeeperSettings;
}

/**
 * The servers: `serverLists` as given, else the environment's `ZK_CONNECT` as the CLI reads it (lib/cli/arguments.ts:
 * an empty one is none); undefined when neither.
 */
export function serverListsOf(zk: ZookeeperConfiguration, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return zk.serverLists ?? (env.ZK_CONNECT || undefined);
}

/**
 * Checks the `zookeeper` options (of the module, or of a standalone operator); throws a JobConfigurationError
 * naming the field, before any connection is made.
 */
export function validateZookeeperOptions(zk: ZookeeperConfiguration, env: NodeJS.ProcessEnv = process.env): void {
  function fail(field: string, detail: string): never {
    throw new JobConfigurationError(undefined, field, detail);
  }
  if (!zk || typeof zk !== 'object') fail('zookeeper', 'is required: { serverLists, namespace }');
  const serverLists = serverListsOf(zk, env);
  if (serverLists === undefined)
    fail(
      'zookeeper.serverLists',
      'is not given and ZK_CONNECT is not set: give zookeeper.serverLists ("host:port[,host:port...]"), or set the ' +
        'environment variable ZK_CONNECT=host:port[,host:port...] (`npx nestjs-elastic-job zookeeper` runs one for ' +
        'development and prints it)',
    );
  const servers = typeof serverLists === 'string' ? parseServerLists(serverLists) : 'it is not a string';
  if (typeof servers === 'string') {
    fail(
      'zookeeper.serverLists',
      `must be "host:port[,host:port...][/chroot]" with ports in 1..65535: ${servers} (got ` +
        `${JSON.stringify(serverLists)}${zk.serverLists === undefined ? ' from ZK_CONNECT' : ''})`,
    );
  }
  const namespaceProblem = typeof zk.namespace === 'string' ? namespacePathProblem(zk.namespace) : 'is not a string';
  if (namespaceProblem)
    fail(
      'zookeeper.namespace',
      `must be a ZooKeeper node name, or several joined by '/' (a nested namespace, as Curator allows): it ` +
        `${namespaceProblem} (got ${JSON.stringify(zk.namespace)})`,
    );
  if (zk.namespace.split('/')[0] === RESERVED_ROOT_NODE && servers.chroot === '') {
    fail(
      'zookeeper.namespace',
      `'${RESERVED_ROOT_NODE}' is ZooKeeper's own subtree (quotas, cluster config): choose another namespace`,
    );
  }
  for (const field of [
    'sessionTimeoutMilliseconds',
    'connectionTimeoutMilliseconds',
    'baseSleepTimeMilliseconds',
    'maxSleepTimeMilliseconds',
  ] as const) {
    const value = zk[field];
    if (value !== undefined && (!Number.isInteger(value) || value <= 0))
      fail(`zookeeper.${field}`, `must be a positive integer, got ${JSON.stringify(value)}`);
  }
  if (zk.maxRetries !== undefined && (!Number.isInteger(zk.maxRetries) || zk.maxRetries < 0))
    fail('zookeeper.maxRetries', `must be an integer >= 0, got ${JSON.stringify(zk.maxRetries)}`);
  if (zk.digest !== undefined && (typeof zk.digest !== 'string' || !/^[^:]+:.+$/.test(zk.digest)))
    fail('zookeeper.digest', 'must be "user:password"');
}

/** What is wrong with a namespace: one node name, or several joined by '/' (`team/billing`); undefined if fine. */
export function namespacePathProblem(namespace: string): string | undefined {
  if (namespace.startsWith('/')) return `starts with '/': write it without, as '${namespace.replace(/^\/+/, '')}'`;
  if (namespace.endsWith('/')) return "ends with '/'";
  if (namespace.trim() !== namespace) return 'has whitespace around it';
  for (const segment of namespace.split('/')) {
    const problem = nodeNameProblem(segment);
    if (problem) return namespace.includes('/') ? `has a part '${segment}' that ${problem}` : problem;
  }
  return undefined;
}
