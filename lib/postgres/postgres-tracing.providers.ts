import type { FactoryProvider, InjectionToken, OptionalFactoryDependency } from '@nestjs/common';
import { ElasticJobRegistry } from '../elastic-job.registry.js';
import type { TracedEventSource } from '../tracing/tracing-service.js';
import { tracingProvider, tracingProviderAsync, validateDatabaseTracingOptions } from '../tracing/tracing-providers.js';
import { ElasticJobPostgresTracing, type PostgresTracingOptions } from './postgres-tracing.js';

/** Checks the options before anything connects; a JobConfigurationError names the field. */
export function validatePostgresTracingOptions(options: PostgresTracingOptions): void {
  validateDatabaseTracingOptions(options, {
    key: 'postgres',
    factory: 'postgresTracing()',
    pool: 'an existing pg.Pool',
    example: 'postgres://user:password@host:5432/database',
  });
}

const make = (jobs: TracedEventSource, options: PostgresTracingOptions) => new ElasticJobPostgresTracing(jobs, options);

/**
 * The tracing provider, for the `providers` of the module that imports ElasticJobModule:
 * `providers: [postgresTracing({ connectionString: process.env.DATABASE_URL })]`.
 * @publicApi
 */
export function postgresTracing(options: PostgresTracingOptions): FactoryProvider<ElasticJobPostgresTracing> {
  return tracingProvider(ElasticJobPostgresTracing, ElasticJobRegistry, options, validatePostgresTracingOptions, make);
}

/**
 * The same, with options from other providers (the app's own `pg.Pool`, a config service):
 * `postgresTracingAsync({ useFactory: (db: Database) => ({ pool: db.pool }), inject: [Database] })`.
 * @publicApi
 */
export function postgresTracingAsync(factory: {
  // The injected values, in `inject` order (their types are the caller's to state, as in Nest's own factories).
  useFactory: (...args: never[]) => PostgresTracingOptions | Promise<PostgresTracingOptions>;
  inject?: Array<InjectionToken | OptionalFactoryDependency>;
}): FactoryProvider<ElasticJobPostgresTracing> {
  return tracingProviderAsync(
    ElasticJobPostgresTracing,
    ElasticJobRegistry,
    factory,
    validatePostgresTracingOptions,
    make,
  );
}
