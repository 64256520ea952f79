/**
 * `nestjs-elastic-job/postgres`: execution tracing into PostgreSQL (ElasticJob's tables), in its own entry point so
 * that apps without `pg` never load it.
 * @module nestjs-elastic-job/postgres
 */
export { ElasticJobPostgresTracing, type PostgresTracingOptions } from './postgres-tracing.js';
export { postgresTracing, postgresTracingAsync, validatePostgresTracingOptions } from './postgres-tracing.providers.js';
export { CREATE_TABLES } from './job-event-repository.js';
export { PostgresTraceStore } from './postgres-trace-store.js';
