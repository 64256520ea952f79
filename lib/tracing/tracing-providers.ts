import type { FactoryProvider, InjectionToken, OptionalFactoryDependency, Type } from '@nestjs/common';
import { JobConfigurationError } from '../errors/elastic-job.errors.js';
import type { TracedEventSource, TracingServiceOptions } from './tracing-service.js';

/** The options every database's tracing takes: where to write (a connection string or the app's pool) and when. */
export interface DatabaseTracingOptions<Pool> extends TracingServiceOptions {
  connectionString?: string;
  pool?: Pool;
}

/** How a database's tracing names itself in the errors of its options. */
export interface TracingOptionsNames {
  /** The key under `tracing.` in the error's field: `postgres`. */
  key: string;
  /** The provider function: `postgresTracing()`. */
  factory: string;
  /** What `pool` is: `an existing pg.Pool`. */
  pool: string;
  /** A connection string to show: `postgres://user:password@host:5432/database`. */
  example: string;
}

/** Checks a database tracing's options before anything connects; a JobConfigurationError names the field. */
export function validateDatabaseTracingOptions(
  options: DatabaseTracingOptions<unknown>,
  names: TracingOptionsNames,
): void {
  const fail = (field: string, detail: string): never => {
    throw new JobConfigurationError(undefined, `tracing.${names.key}.${field}`, detail);
  };
  if (!options || typeof options !== 'object') fail('options', `${names.factory} needs an options object`);
  const given = [options.connectionString !== undefined, options.pool !== undefined].filter(Boolean).length;
  if (given !== 1)
    fail('connectionString', `give either connectionString or pool (${names.pool}), not both or neither`);
  if (
    options.connectionString !== undefined &&
    (typeof options.connectionString !== 'string' || !options.connectionString)
  )
    fail('connectionString', `must be a non-empty string, e.g. ${names.example}`);
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

/** A tracing provider made from checked options: `{ provide: Service, useFactory: (jobs) => make(jobs, options) }`. */
export function tracingProvider<Service, Options>(
  service: Type<Service>,
  source: InjectionToken,
  options: Options,
  validate: (options: Options) => void,
  make: (source: TracedEventSource, options: Options) => Service,
): FactoryProvider<Service> {
  validate(options);
  return { provide: service, useFactory: (jobs: TracedEventSource) => make(jobs, options), inject: [source] };
}

/** The same, with options from other providers, checked when they come. */
export function tracingProviderAsync<Service, Options>(
  service: Type<Service>,
  source: InjectionToken,
  factory: {
    // The injected values, in `inject` order (their types are the caller's to state, as in Nest's own factories).
    useFactory: (...args: never[]) => Options | Promise<Options>;
    inject?: Array<InjectionToken | OptionalFactoryDependency>;
  },
  validate: (options: Options) => void,
  make: (source: TracedEventSource, options: Options) => Service,
): FactoryProvider<Service> {
  return {
    provide: service,
    useFactory: async (jobs: TracedEventSource, ...args: unknown[]) => {
      const options = await factory.useFactory(...(args as never[]));
      validate(options);
      return make(jobs, options);
    },
    inject: [source, ...(factory.inject ?? [])],
  };
}
