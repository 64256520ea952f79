/**
 * `nestjs-elastic-job/mysql`: execution tracing into MySQL or MariaDB (ElasticJob's tables), in its own entry point
 * so that apps without `mysql2` never load it.
 * @module nestjs-elastic-job/mysql
 */
export { ElasticJobMysqlTracing, type MysqlTracingOptions } from './mysql-tracing.js';
export { mysqlTracing, mysqlTracingAsync, validateMysqlTracingOptions } from './mysql-tracing.providers.js';
export { CREATE_TABLES } from './mysql-job-event-repository.js';
export { MysqlTraceStore } from './mysql-trace-store.js';
