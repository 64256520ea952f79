/** Exit codes: ElasticJob's operation succeeded, failed (the reason on stderr), or the command line was wrong. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** The command line is wrong (unknown command or option, missing argument, malformed value): exit 2, with usage. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
