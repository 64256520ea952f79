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
 * A call names a job that is not there: in the namespace (no `/{job}/config` node: the operator API), or among the
 * `@ShardedJob()` methods of this app (ElasticJobRegistry).
 */
export class JobNotFoundError extends ElasticJobError {
  constructor(
    readonly jobName: string,
    /** The jobs there are, for the message. */
    known: readonly string[],
    where: 'namespace' | 'app' = 'namespace',
  ) {
    super(
      where === 'namespace'
        ? `No job named '${jobName}' in this namespace (it has no config node); jobs there: ` +
            `${known.length > 0 ? known.join(', ') : 'none'}. Check the name and the namespace.`
        : `No @ShardedJob() named '${jobName}' in this app; its jobs: ${known.length > 0 ? known.join(', ') : 'none'}` +
            ` (there are none before the application has bootstrapped).`,
    );
  }
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
