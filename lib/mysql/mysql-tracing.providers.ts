import type { FactoryProvider, InjectionToken, OptionalFactoryDependency } from '@nestjs/common';
import { ElasticJobRegistry } from '../elastic-job.registry.js';
import { JobConfigurationError } from '../errors/elastic-job.errors.js';
import type { TracedEventSource } from '../tracing/tracing-service.js';
import { tracingProvider, tracingProviderAsync, validateDatabaseTracingOptions } from '../tracing/tracing-providers.js';
import { ElasticJobMysqlTracing, type MysqlTracingOptions } from './mysql-tracing.js';

const EXAMPLE = 'mysql://user:password@host:3306/database';

/**
 * Checks the options before anything connects; a JobConfigurationError names the field. A connection string must
 * name its database: ElasticJob's tables are made in it.
 */
export function validateMysqlTracingOptions(options: MysqlTracingOptions): void {
  validateDatabaseTracingOptions(options, {
    key: 'mysql',
    factory: 'mysqlTracing()',
    pool: "an existing pool of mysql2/promise's createPool()",
    example: EXAMPLE,
  });
  if (options.connectionString === undefined) return;
  let url: URL | undefined;
  try {
    url = new URL(options.connectionString);
  } catch {
    url = undefined;
  }
  if (url?.protocol !== 'mysql:' || url.pathname.length < 2)
    throw new JobConfigurationError(
      undefined,
      'tracing.mysql.connectionString',
      `must be a mysql:// URL naming the database, e.g. ${EXAMPLE}`,
    );
}

const make = (jobs: TracedEventSource, options: MysqlTracingOptions) => new ElasticJobMysqlTracing(jobs, options);

/**
 * The tracing provider, for the `providers` of the module that imports ElasticJobModule:
 * `providers: [mysqlTracing({ connectionString: process.env.MYSQL_URL })]`.
 * @publicApi
 */
export function mysqlTracing(options: MysqlTracingOptions): FactoryProvider<ElasticJobMysqlTracing> {
  return tracingProvider(ElasticJobMysqlTracing, ElasticJobRegistry, options, validateMysqlTracingOptions, make);
}

/**
 * The same, with options from other providers (the app's own mysql2 pool, a config service):
 * `mysqlTracingAsync({ useFactory: (db: Database) => ({ pool: db.pool }), inject: [Database] })`.
 * @publicApi
 */
export function mysqlTracingAsync(factory: {
  // The injected values, in `inject` order (their types are the caller's to state, as in Nest's own factories).
  useFactory: (...args: never[]) => MysqlTracingOptions | Promise<MysqlTracingOptions>;
  inject?: Array<InjectionToken | OptionalFactoryDependency>;
}): FactoryProvider<ElasticJobMysqlTracing> {
  return tracingProviderAsync(ElasticJobMysqlTracing, ElasticJobRegistry, factory, validateMysqlTracingOptions, make);
}
