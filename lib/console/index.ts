/**
 * `nestjs-elastic-job/console`: the web console, in its own entry point so that apps without it load none of it.
 * @module nestjs-elastic-job/console
 */
export { ElasticJobConsoleModule } from './console.module.js';
export type { ConsoleRegistryOption, ConsoleRequest, ElasticJobConsoleOptions } from './console-options.js';
export type {
  ConsoleChange,
  ConsoleExecutions,
  ConsoleJobDetail,
  ConsoleJobRow,
  ConsoleJobsPage,
  ConsoleRegistryInfo,
} from './console-state.service.js';
export { CSRF_COOKIE, CSRF_HEADER } from './console-action.guard.js';
export type { ConsoleWorkflow } from './model/workflow-model.js';
