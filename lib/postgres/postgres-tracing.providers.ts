import type { FactoryProvider, InjectionToken, OptionalFactoryDependency } from '@nestjs/common';
import { ElasticJobRegistry } from '../elastic-job.registry.js';
import { JobConfigurationError } from '../errors/elastic-job.errors.js';
import { ElasticJobPostgresTracing, type PostgresTracingOptions } from './postgres-tracing.js';

/** Checks the options before anything connects; a JobConfigurationError names the field. */
export function validatePostgresTracingOptions(options: PostgresTracingOptions): void {
  const fail = (field: string, detail: string): never => {
    throw new JobConfigurationError(undefined, `tracing.postgres.${field}`, detail);
  };
  if (!options || typeof options !== 'object') fail('options', 'postgresTracing() needs an options object');
  const given = [options.connectionString !== undefined, options.pool !== undefined].filter(Boolean).length;
  if (given !== 1)
    fail('connectionString', 'give either connectionString or pool (an existing pg.Pool), not both or neither');
  if (
    options.connectionString !== undefined &&
    (typeof options.connectionString !== 'string' || !options.connectionString)
  )
    fail('connectionString', 'must be a non-empty string, e.g. postgres://user:password@host:5432/database');
  for (const field of [
    'maxBufferedEvents',
    'flushIntervalMilliseconds',
    'batchSize',
    'shutdownFlushTimeoutMilliseconds',
  ] as const) {
    const value = options[field];
    if (value !== undefined && (!Number.isInteger(value) || value <= 0))
      fail(field, `must be an integer > 0, got ${JSON.stringify(value)}`);
  }
}

/**
 * The tracing provider, for the `providers` of the module that imports ElasticJobModule:
 * `providers: [postgresTracing({ connectionString: process.env.DATABASE_URL })]`.
 * @publicApi
 */
export function postgresTracing(options: PostgresTracingOptions): FactoryProvider<ElasticJobPostgresTracing> {
  validatePostgresTracingOptions(options);
  return {
    provide: ElasticJobPostgresTracing,
    useFactory: (jobs: ElasticJobRegistry) => new ElasticJobPostgresTracing(jobs, options),
    inject: [ElasticJobRegistry],
  };
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
  return {
    provide: ElasticJobPostgresTracing,
    useFactory: async (jobs: ElasticJobRegistry, ...args: unknown[]) => {
      const options = await factory.useFactory(...(args as never[]));
      validatePostgresTracingOptions(options);
      return new ElasticJobPostgresTracing(jobs, options);
    },
    inject: [ElasticJobRegistry, ...(factory.inject ?? [])],
  };
}
