import {
  CoordinationTimeoutError,
  CronExpressionError,
  DependencyUnavailableError,
  ElasticJobError,
  InvalidOperationError,
  JobConfigurationError,
  JobConflictError,
  JobNotFoundError,
  RegistryError,
  ServerNotFoundError,
  StoredConfigurationError,
  WorkflowNotFoundError,
} from './elastic-job.errors.js';

/**
 * What a failed operator call tells a caller on every surface (docs/operations/errors.md, "Errors of the operator's
 * surfaces"): the same code whether it came over a message pattern (any transport), from the console, or as the CLI's
 * exit code.
 */
export const ELASTIC_JOB_ERROR_CODES = {
  /** An argument is malformed (a name that is no node name, an item out of range, a field of the wrong type). */
  INVALID_ARGUMENT: { cliExit: 2, httpStatus: 400 },
  /** A configuration update would make a job its instances refuse. */
  INVALID_CONFIGURATION: { cliExit: 2, httpStatus: 400 },
  JOB_NOT_FOUND: { cliExit: 3, httpStatus: 404 },
  SERVER_NOT_FOUND: { cliExit: 3, httpStatus: 404 },
  /** A workflow no instance declaring it has started in the namespace. */
  WORKFLOW_NOT_FOUND: { cliExit: 3, httpStatus: 404 },
  /** A run of a workflow that is not kept (never was, or older than its last `keepRuns`). */
  WORKFLOW_RUN_NOT_FOUND: { cliExit: 3, httpStatus: 404 },
  /** The node changed under the call (a configuration updated meanwhile, a job registered by another owner). */
  CONFLICT: { cliExit: 1, httpStatus: 409 },
  /** What is stored for the job cannot be read (a config node written by hand or another tool): fix it there. */
  INVALID_STORED_DATA: { cliExit: 1, httpStatus: 409 },
  /** Something besides ZooKeeper did not answer (the execution history's database, a transport job's broker). */
  DEPENDENCY_UNAVAILABLE: { cliExit: 1, httpStatus: 503 },
  /** ZooKeeper did not answer, or refused: `registryCode` says how (CONNECTION_LOSS, NO_AUTH, ...). */
  REGISTRY_ERROR: { cliExit: 1, httpStatus: 503 },
  /** Anything else: the message is not sent (it may say more than a caller should know); the server logs it. */
  INTERNAL: { cliExit: 1, httpStatus: 500 },
} as const;

export type ElasticJobErrorCode = keyof typeof ELASTIC_JOB_ERROR_CODES;

/** A failure as a caller receives it: no stack, no other job's name, a message of at most CLIENT_MESSAGE_LIMIT. */
export interface ElasticJobErrorPayload {
  /** The error's class in this library (`JobNotFoundError`, ...), or `Error` for anything else. */
  name: string;
  code: ElasticJobErrorCode;
  message: string;
  /** ZooKeeper's error name, for a REGISTRY_ERROR or a CONFLICT that came from ZooKeeper (`BAD_VERSION`). */
  registryCode?: string;
}

/** Longest message sent to a caller; ours are far shorter, a RegistryError's may carry a long path. */
export const CLIENT_MESSAGE_LIMIT = 1000;

const INTERNAL_MESSAGE = 'internal error: the service logged it';

/** The code of a failure. */
export function errorCodeOf(error: unknown): ElasticJobErrorCode {
  if (error instanceof InvalidOperationError || error instanceof CronExpressionError) return 'INVALID_ARGUMENT';
  if (error instanceof StoredConfigurationError) return 'INVALID_STORED_DATA';
  if (error instanceof JobConfigurationError) return 'INVALID_CONFIGURATION';
  if (error instanceof DependencyUnavailableError) return 'DEPENDENCY_UNAVAILABLE';
  if (error instanceof JobNotFoundError) return 'JOB_NOT_FOUND';
  if (error instanceof ServerNotFoundError) return 'SERVER_NOT_FOUND';
  if (error instanceof WorkflowNotFoundError)
    return error.runId === undefined ? 'WORKFLOW_NOT_FOUND' : 'WORKFLOW_RUN_NOT_FOUND';
  if (error instanceof JobConflictError) return 'CONFLICT';
  if (error instanceof RegistryError) return error.code === 'BAD_VERSION' ? 'CONFLICT' : 'REGISTRY_ERROR';
  if (error instanceof CoordinationTimeoutError) return 'REGISTRY_ERROR';
  return 'INTERNAL';
}

/**
 * True when the payload does not carry the error's whole message (anything not the library's, a ZooKeeper error
 * naming a node, a message over the limit): the surface logs the error, so that what the caller misses is in the log.
 */
export function isHiddenFromCaller(error: unknown): boolean {
  return !(error instanceof Error) || errorPayload(error).message !== error.message;
}

/** The failure as a caller may receive it, whoever they are. */
export function errorPayload(error: unknown): ElasticJobErrorPayload {
  const code = errorCodeOf(error);
  if (code === 'INTERNAL' || !(error instanceof ElasticJobError))
    return { name: 'Error', code: 'INTERNAL', message: INTERNAL_MESSAGE };
  let message = error.message;
  // ZooKeeper's own errors name the node, which may be another job's (an operation over every job of a server).
  if (error instanceof RegistryError && error.path !== undefined && message.includes(error.path))
    message = `ZooKeeper answered ${error.code} (the service logged the node)`;
  if (message.length > CLIENT_MESSAGE_LIMIT) message = `${message.slice(0, CLIENT_MESSAGE_LIMIT - 1)}…`;
  return {
    name: error.name,
    code,
    message,
    ...(error instanceof RegistryError ? { registryCode: error.code } : {}),
  };
}
