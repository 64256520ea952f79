import type { Logger } from '@nestjs/common';
import { DependencyUnavailableError, JobExecutionError } from '../../errors/elastic-job.errors.js';
import type { ErrorHandlerType, JobErrorHandler } from '../../interfaces/sharded-job-options.interface.js';

export const BUILT_IN_ERROR_HANDLER_TYPES: readonly ErrorHandlerType[] = ['LOG', 'THROW', 'IGNORE'];

/**
 * Built-in handlers, ElasticJob's names: LOG logs with the stack, THROW fails the firing, IGNORE drops it. LOG gives a
 * DependencyUnavailableError one debug line: its outage has its own log lines, not one per item.
 */
export function builtInErrorHandler(type: ErrorHandlerType, logger: Logger): JobErrorHandler {
  switch (type) {
    case 'LOG':
      return {
        type,
        handleException: (jobName, error, context) => {
          if (error instanceof DependencyUnavailableError)
            return logger.debug(`Job '${jobName}' item ${context.shardingItem} failed: ${error.message}`);
          logger.error(
            `Job '${jobName}' item ${context.shardingItem} failed: ` +
              `${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
          );
        },
      };
    case 'THROW':
      return {
        type,
        handleException: (jobName, error, context) => {
          throw new JobExecutionError(jobName, context.shardingItem, error);
        },
      };
    case 'IGNORE':
      return { type, handleException: () => undefined };
  }
}
