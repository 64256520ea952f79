import type { CanActivate, InjectionToken, Type } from '@nestjs/common';
import { describeError, JobConfigurationError } from '../errors/elastic-job.errors.js';
import { validateZookeeperOptions } from '../registry/zookeeper-settings.js';

/** Options of `ElasticJobConsoleModule.forRoot()`. */
export interface ElasticJobConsoleOptions {
  /** Where the console is served, relative to the app's global prefix. Default `elastic-job`. */
  path?: string;
  /**
   * Lets the page trigger, disable and enable jobs, servers and items, and shut instances down. Default false:
   * read-only (the action routes answer 403). With `NODE_ENV=production`, actions need a `guard`.
   */
  actions?: boolean;
  /**
   * Protects every route of the console (page, data, live changes, actions), as `@UseGuards()` would: a guard
   * class (resolved by Nest, with injection) or instance.
   */
  guard?: Type<CanActivate> | CanActivate;
  /**
   * Where the executions list comes from: a provider of the app implementing `ExecutionHistory`, such as
   * `ElasticJobPostgresTracing` (`nestjs-elastic-job/postgres`) or `ElasticJobMysqlTracing` (`nestjs-elastic-job/mysql`).
   * Without it the page has no executions list.
   */
  executionHistory?: InjectionToken;
  /** The page's title. Default `ElasticJob console`. */
  title?: string;
  /**
   * Who made a change, for the `config.changed` audit event and log line: given the HTTP request after the app's
   * guard ran. Default: `request.user` as Passport and most guards leave it (a string, or its `username`, `name`,
   * `email` or `id`); undefined when there is none.
   */
  auditUser?: (request: ConsoleRequest) => string | undefined;
  /**
   * Other registries and namespaces the page can switch to, beside the app's own (named `app`), as ElasticJob-UI
   * connects to several. Read-only unless an entry says `actions: true` (and `actions` is on). The console opens a
   * ZooKeeper session for each when first asked, and closes it at shutdown.
   */
  registries?: ConsoleRegistryOption[];
}

/** A registry and namespace the console can show besides the app's own. */
export interface ConsoleRegistryOption {
  /** Shown in the page's switcher and used as `?registry=`: letters, digits, `-_.`, at most 64; not `app`. */
  name: string;
  /** ZooKeeper's `host:port[,host:port]`. */
  serverLists: string;
  namespace: string;
  /** `user:password`, when the namespace has a digest ACL. */
  digest?: string;
  /** The page may act on this namespace (trigger, disable, edit, ...). Default false. */
  actions?: boolean;
}

/** The name of the app's own registry among the console's. */
export const APP_REGISTRY = 'app';
const REGISTRY_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** The HTTP request an action came with, as the console reads it (Express and Fastify requests both fit). */
export interface ConsoleRequest {
  headers: Record<string, string | string[] | undefined>;
  /** What the app's guard or authentication middleware put there (Passport's `req.user`). */
  user?: unknown;
}

/** `request.user` as guards leave it: a name, or an object with one. */
export function defaultAuditUser(request: ConsoleRequest): string | undefined {
  const user = request.user;
  if (typeof user === 'string') return user || undefined;
  if (typeof user !== 'object' || user === null) return undefined;
  for (const key of ['username', 'name', 'email', 'id'] as const) {
    const value = (user as Record<string, unknown>)[key];
    if (typeof value === 'string' && value !== '') return value;
    if (typeof value === 'number') return String(value);
  }
  return undefined;
}

export interface ResolvedConsoleOptions {
  path: string;
  actions: boolean;
  guard: Type<CanActivate> | CanActivate | undefined;
  executionHistory: InjectionToken | undefined;
  title: string;
  auditUser: (request: ConsoleRequest) => string | undefined;
  registries: ConsoleRegistryOption[];
}

export const CONSOLE_OPTIONS = Symbol('ELASTIC_JOB_CONSOLE_OPTIONS');

/** Path segments: letters, digits and `-_.~`, as URL path segments need no escaping then. */
const PATH = /^[A-Za-z0-9\-_.~]+(\/[A-Za-z0-9\-_.~]+)*$/;

/** Checked at forRoot(), before the app starts: a JobConfigurationError names the option. */
export function resolveConsoleOptions(
  options: ElasticJobConsoleOptions = {},
  environment: NodeJS.ProcessEnv = process.env,
): ResolvedConsoleOptions {
  const fail = (field: string, detail: string): never => {
    throw new JobConfigurationError(undefined, `console.${field}`, detail, 'ElasticJobConsoleModule');
  };
  if (typeof options !== 'object' || options === null) fail('options', 'forRoot() takes an options object');
  const path = (options.path ?? 'elastic-job').replace(/^\/+|\/+$/g, '');
  if (!PATH.test(path) || path.split('/').some((segment) => segment === '.' || segment === '..'))
    fail(
      'path',
      `must be URL path segments of letters, digits and -_.~, e.g. "admin/jobs"; got ${JSON.stringify(options.path)}`,
    );
  if (options.actions !== undefined && typeof options.actions !== 'boolean')
    fail('actions', `must be true or false, got ${JSON.stringify(options.actions)}`);
  const guard = options.guard;
  if (
    guard !== undefined &&
    typeof guard !== 'function' &&
    (typeof guard !== 'object' || guard === null || typeof (guard as CanActivate).canActivate !== 'function')
  )
    fail('guard', 'must be a CanActivate class or instance (an object with canActivate(context))');
  const actions = options.actions ?? false;
  if (actions && guard === undefined && environment.NODE_ENV === 'production')
    fail(
      'guard',
      'actions are enabled in production (NODE_ENV=production) with no guard: anyone reaching the app could ' +
        'trigger or stop jobs. Give a guard (your authentication), or leave actions off',
    );
  if (options.title !== undefined && (typeof options.title !== 'string' || options.title.length > 100))
    fail('title', 'must be a string of at most 100 characters');
  if (options.auditUser !== undefined && typeof options.auditUser !== 'function')
    fail('auditUser', 'must be a function of the request returning the user name (or undefined)');
  const registries = options.registries ?? [];
  if (!Array.isArray(registries))
    fail('registries', 'must be a list of { name, serverLists, namespace, digest?, actions? }');
  const names = new Set<string>([APP_REGISTRY]);
  registries.forEach((entry, index) => {
    const field = `registries[${index}]`;
    if (typeof entry !== 'object' || entry === null)
      fail(field, 'must be { name, serverLists, namespace, digest?, actions? }');
    const unknown = Object.keys(entry).filter(
      (key) => !['name', 'serverLists', 'namespace', 'digest', 'actions'].includes(key),
    );
    if (unknown.length > 0)
      fail(`${field}.${unknown[0]}`, 'is not an option: name, serverLists, namespace, digest, actions');
    if (typeof entry.name !== 'string' || !REGISTRY_NAME.test(entry.name))
      fail(`${field}.name`, `must be letters, digits and -_. (at most 64), got ${JSON.stringify(entry.name)}`);
    if (names.has(entry.name))
      fail(
        `${field}.name`,
        `'${entry.name}' is taken (${entry.name === APP_REGISTRY ? "the app's own registry" : 'another entry'})`,
      );
    names.add(entry.name);
    // Another registry names its servers: ZK_CONNECT is the app's own (never read here: an empty environment below).
    if (entry.serverLists === undefined)
      fail(`${field}.serverLists`, 'is required: the servers of that registry, "host:port[,host:port...]"');
    try {
      validateZookeeperOptions(
        { serverLists: entry.serverLists, namespace: entry.namespace, digest: entry.digest },
        {},
      );
    } catch (error) {
      fail(field, describeError(error));
    }
    if (entry.actions !== undefined && typeof entry.actions !== 'boolean')
      fail(`${field}.actions`, `must be true or false, got ${JSON.stringify(entry.actions)}`);
  });
  return {
    path,
    actions,
    guard,
    executionHistory: options.executionHistory,
    title: options.title ?? 'ElasticJob console',
    auditUser: options.auditUser ?? defaultAuditUser,
    registries: registries.map((entry) => ({ ...entry })),
  };
}
