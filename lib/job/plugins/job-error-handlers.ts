import type { Logger } from '@nestjs/common';
import { DependencyUnavailableError, JobExecutionError } from '../../errors/elastic-job.errors.js';
import type { ErrorHandlerType, JobErrorHandler } from '../../interfaces/sharded-job-options.interface.js';
import { AlertDispatcher } from '../alerts/alert-dispatcher.js';
import { ALERT_HANDLER_TYPES } from '../alerts/alert-props.js';

export const BUILT_IN_ERROR_HANDLER_TYPES: readonly ErrorHandlerType[] = [
  'LOG',
  'THROW',
  'IGNORE',
  ...ALERT_HANDLER_TYPES,
];

/** A built-in handler; the alert handlers close (ElasticJob's JobErrorHandler is Closeable for the same reason). */
export interface BuiltInErrorHandler extends JobErrorHandler {
  /** The job stops here: alerts still being delivered are given a moment, then given up (AlertDispatcher.close). */
  close?(): Promise<void>;
}

/**
 * Built-in handlers, ElasticJob's names: LOG logs with the stack, THROW fails the firing, IGNORE drops it. LOG gives a
 * DependencyUnavailableError one debug line: its outage has its own log lines, not one per item. EMAIL, WECHAT and
 * DINGTALK (ElasticJob's ecosystem/error-handler modules) and this library's WEBHOOK log as LOG and send an alert
 * (lib/job/alerts/).
 */
export function builtInErrorHandler(
  type: ErrorHandlerType,
  logger: Logger,
  /** The job's current properties: the alert handlers' settings (docs/guide/alerts.md). */
  props: () => Readonly<Record<string, string>> = () => ({}),
): BuiltInErrorHandler {
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
    case 'EMAIL':
    case 'WECHAT':
    case 'DINGTALK':
    case 'WEBHOOK': {
      // Logged as LOG logs it (ElasticJob's alert handlers log the cause too), then alerted on, off the item's path.
      const log = builtInErrorHandler('LOG', logger);
      const alerts = new AlertDispatcher(type, logger, props);
      return {
        type,
        handleException: (jobName, error, context) => {
          void log.handleException(jobName, error, context);
          alerts.alert(jobName, error, context);
        },
        close: () => alerts.close(),
      };
    }
  }
}
