/**
 * Exit codes: the operation succeeded, failed (the reason on stderr: ZooKeeper trouble, a conflict), the command line
 * or an argument was wrong, or it named a job or server that is not there. The last three are the codes errors have
 * on every surface (errors/error-payload.ts: ELASTIC_JOB_ERROR_CODES).
 */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;
export const EXIT_NOT_FOUND = 3;

/** The command line is wrong (unknown command or option, missing argument, malformed value): exit 2, with usage. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
