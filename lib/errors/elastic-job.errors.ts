/**
 * The one error family of the library. Every error says which job (when there is one) and what to do.
 * Catch `ElasticJobError` to catch them all.
 */
export class ElasticJobError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A `@ShardedJob()` or module option is invalid. Thrown at bootstrap, before anything is written to ZooKeeper. */
export class JobConfigurationError extends ElasticJobError {
  constructor(
    readonly jobName: string | undefined,
    readonly field: string,
    /** What is wrong with the field, without the job and field names. */
    readonly detail: string,
    /** Whose options they are, when not a job's: the module whose forRoot() was given them. */
    owner = 'ElasticJobModule',
  ) {
    super(`${jobName === undefined ? `${owner} options` : `Job '${jobName}'`}: invalid '${field}': ${detail}`);
  }
}

/**
 * A job's stored configuration (its `config` node, written by another tool or by hand) cannot be read or fails the
 * validation `@ShardedJob()` options get: the operator's calls that need it refuse to guess. A JobConfigurationError,
 * but not the caller's mistake: its code is INVALID_STORED_DATA, not INVALID_CONFIGURATION.
 */
export class StoredConfigurationError extends JobConfigurationError {}

/** A cron given to `describeCron()` (or the CLI's `cron`) that a job would refuse. */
export class CronExpressionError extends ElasticJobError {
  constructor(
    readonly cron: string,
    /** What is wrong, as the job validation says it. */
    readonly detail: string,
  ) {
    super(`Invalid cron '${cron}': ${detail}`);
  }
}

/** The job name is already registered in ZooKeeper by another provider method (ElasticJob's "job conflict"). */
export class JobConflictError extends ElasticJobError {
  constructor(
    readonly jobName: string,
    readonly registeredOwner: string,
    readonly localOwner: string,
  ) {
    super(
      `Job '${jobName}': invalid 'jobName': it is registered in ZooKeeper by '${registeredOwner}', but this app ` +
        `declares it on '${localOwner}'. Rename one of the jobs, remove the old job's node from ZooKeeper if it ` +
        `is gone for good, or, to share the job (say with Java ElasticJob instances), give both the same ` +
        `identity with the jobClass option.`,
    );
  }
}

/**
 * A call names a job that is not there: in the namespace (no `/{job}/config` node: the operator API and what is built
 * on it), or among the `@ShardedJob()` methods of this app (ElasticJobRegistry). The namespace's message names no
 * other job: it reaches remote callers (message patterns, the console), and the `jobs` query lists the jobs for
 * those allowed to see them.
 */
export class JobNotFoundError extends ElasticJobError {
  constructor(
    readonly jobName: string,
    /** For `app`: this app's jobs, listed in the message of a local call. Not used for a namespace's. */
    known: readonly string[] = [],
    where: 'namespace' | 'app' = 'namespace',
  ) {
    super(
      where === 'namespace'
        ? `No job named ${quoteInput(jobName)} in this namespace (it has no config node): check the name and the ` +
            `namespace; the jobs query lists the jobs there`
        : `No @ShardedJob() named ${quoteInput(jobName)} in this app; its jobs: ` +
            `${known.length > 0 ? known.join(', ') : 'none'} (there are none before the application has bootstrapped).`,
    );
  }
}

/**
 * An operation names a server that has no `servers/{ip}` node where it applies: it has never run the job (or any job,
 * for a server alone), or it left and its node was cleaned up. Nothing is written for it: ElasticJob rewrites
 * `servers/{ip}` when an instance registers and deletes the nodes of servers with no instance online, so a server
 * cannot be disabled before it starts (give the job `disabled: true` to start it disabled everywhere).
 */
export class ServerNotFoundError extends ElasticJobError {
  constructor(
    readonly serverIp: string,
    /** The job looked in; undefined when every job was. */
    readonly jobName: string | undefined,
    readonly operation: string,
  ) {
    super(
      `${operation}: no server ${quoteInput(serverIp)} in ` +
        `${jobName === undefined ? 'any job of this namespace' : `job ${quoteInput(jobName)}`} (it has no ` +
        `servers/{ip} node there): check the IP; a server that has not registered cannot be operated on ahead, ` +
        `as its instance rewrites the node when it starts (the servers query lists the servers there)`,
    );
  }
}

/**
 * An operation names a workflow that no instance declaring it has started in the namespace (no
 * `/.workflows/{name}` node: docs/guide/workflows.md), or a run of it that is not kept (`runId` set: the
 * run never was, or it is older than the workflow's last `keepRuns`). Nothing is written for it.
 */
export class WorkflowNotFoundError extends ElasticJobError {
  constructor(
    readonly operation: string,
    readonly workflow: string,
    readonly runId?: string,
  ) {
    super(
      runId === undefined
        ? `${operation}: no workflow ${quoteInput(workflow)} in this namespace (no instance declaring it has ` +
            `started): check the name; the workflows query lists the workflows there`
        : `${operation}: no run ${quoteInput(runId)} of ${quoteInput(workflow)} is kept (a workflow keeps its ` +
            `last keepRuns runs): check the id; the workflow's runs query lists them`,
    );
  }
}

/** At most this many characters of a caller's input are quoted back in a message. */
export const QUOTED_INPUT_LIMIT = 64;

/**
 * A caller's input as an error message shows it: quoted, at most QUOTED_INPUT_LIMIT characters (longer ones cut, their
 * length said), control characters escaped. Safe to send back to whoever gave it, whatever they gave.
 */
export function quoteInput(value: unknown): string {
  if (typeof value !== 'string') {
    if (value === undefined) return 'undefined';
    if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
    if (typeof value === 'bigint') return `${shortText(String(value))}n`;
    if (Array.isArray(value)) return `an array of ${value.length}`;
    return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
  }
  // JSON's escapes for control characters and lone surrogates; quotes shown as they are.
  const escaped = JSON.stringify(shortText(value)).slice(1, -1).replace(/\\"/g, '"');
  return `'${escaped}'${value.length > QUOTED_INPUT_LIMIT ? ` (${value.length} characters)` : ''}`;
}

function shortText(text: string): string {
  if (text.length <= QUOTED_INPUT_LIMIT) return text;
  // Not cut inside a surrogate pair: the message stays well-formed text.
  let end = QUOTED_INPUT_LIMIT - 1;
  if (/[\ud800-\udbff]/.test(text[end - 1]!)) end--;
  return `${text.slice(0, end)}…`;
}

/**
 * Resolves as `work` does, or rejects with a RegistryError (`CONNECTION_LOSS`) after `timeoutMs`: the ZooKeeper
 * client holds a request until it reconnects, and a public call must not wait that long. `work` itself goes on.
 */
export function withinBound<T>(work: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new RegistryError(
            'CONNECTION_LOSS',
            undefined,
            `${what}: no answer from ZooKeeper within ${timeoutMs} ms; check that it runs and is reachable (a ` +
              `request already sent may still take effect)`,
          ),
        ),
      timeoutMs,
    );
  });
  work.catch(() => undefined); // a late failure after the bound is not an unhandled rejection
  return Promise.race([work, bound]).finally(() => clearTimeout(timer));
}

/** An operator call's argument is wrong: which operation, which argument, and what it must be. */
export class InvalidOperationError extends ElasticJobError {
  constructor(
    readonly operation: string,
    readonly field: string,
    /** What is wrong with the argument, without the operation and argument names. */
    readonly detail: string,
  ) {
    super(`${operation}: invalid '${field}': ${detail}`);
  }
}

/** A ZooKeeper operation failed. `code` is ZooKeeper's error name, e.g. `CONNECTION_LOSS`, `NO_NODE`. */
export class RegistryError extends ElasticJobError {
  constructor(
    readonly code: string,
    readonly path: string | undefined,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The message of a failure for a log line or an error message (anything may be thrown, not only Errors). */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** ZooKeeper error name of a failure: 'NO_NODE', 'NODE_EXISTS', 'CONNECTION_LOSS', ...; undefined for other errors. */
export function registryErrorCode(error: unknown): string | undefined {
  return error instanceof RegistryError ? error.code : undefined;
}

/**
 * Failures that say nothing about the request, only about the connection (lost, expired, closed, timed out): the
 * request may be retried on the next connection, and is not a reason to log an error.
 */
const CONNECTION_TROUBLE = new Set(['CONNECTION_LOSS', 'SESSION_EXPIRED', 'CLOSED', 'OPERATION_TIMEOUT']);

export function isConnectionTrouble(error: unknown): boolean {
  const code = registryErrorCode(error);
  return code !== undefined && CONNECTION_TROUBLE.has(code);
}

/** A wait (for a leader, for sharding, for a latch, for running items) ran past its bound. */
export class CoordinationTimeoutError extends ElasticJobError {
  constructor(
    readonly jobName: string | undefined,
    readonly waitingFor: string,
    readonly timeoutMs: number,
  ) {
    super(`${jobName ? `Job '${jobName}': ` : ''}gave up waiting ${timeoutMs} ms for ${waitingFor}`);
  }
}

/**
 * A dependency an item needs did not answer (a transport job's broker or workers): the item failed without running
 * anywhere. The LOG error handler gives it no stack: the dependency's outage is logged once when it goes and once
 * when it is back (util/outage-log.ts), and each failed item is still an `item.completed` event.
 */
export class DependencyUnavailableError extends ElasticJobError {
  constructor(
    /** What did not answer, as the logs name it: `client 'WORKERS'`. */
    readonly dependency: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Thrown out of a firing by the THROW error handler: carries the failed items and their causes. */
export class JobExecutionError extends ElasticJobError {
  constructor(
    readonly jobName: string,
    readonly shardingItem: number,
    cause: unknown,
  ) {
    super(`Job '${jobName}': sharding item ${shardingItem} failed: ${describeError(cause)}`, { cause });
  }
}

/**
 * An item ran past its job's `itemTimeoutMilliseconds` (docs/guide/item-policies.md, "Timeout"): its signal aborted
 * with this error as the reason, and the item failed with it.
 */
export class ItemTimeoutError extends ElasticJobError {
  constructor(
    readonly jobName: string,
    readonly shardingItem: number,
    readonly timeoutMs: number,
  ) {
    super(
      `Job '${jobName}': sharding item ${shardingItem} ran past its timeout of ${timeoutMs} ms and was aborted ` +
        '(itemTimeoutMilliseconds): make it faster, split its work, or raise the timeout',
    );
  }
}

/**
 * An item was aborted because a firing of the same job covered it (`overlap: 'cover-early'`, XXL-JOB's COVER_EARLY):
 * the reason its signal carries, and its failure when it stops.
 */
export class ItemCoveredError extends ElasticJobError {
  constructor(
    readonly jobName: string,
    readonly shardingItem: number,
  ) {
    super(
      `Job '${jobName}': sharding item ${shardingItem} was aborted by the next firing, which runs it anew ` +
        "(overlap: 'cover-early')",
    );
  }
}
