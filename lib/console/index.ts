/**
 * `nestjs-elastic-job/console`: the web console, in its own entry point so that apps without it load none of it.
 * @module nestjs-elastic-job/console
 */
export { ElasticJobConsoleModule } from './console.module.js';
export type { ConsoleRequest, ElasticJobConsoleOptions } from './console-options.js';
export type { ConsoleChange, ConsoleJobDetail, ConsoleJobRow, ConsoleJobsPage } from './console-state.service.js';
export { CSRF_COOKIE, CSRF_HEADER } from './console-action.guard.js';
