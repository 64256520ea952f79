import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import {
  ERROR_HANDLER_PROVIDER_METADATA,
  SHARDED_JOB_METADATA,
  SHARDING_STRATEGY_PROVIDER_METADATA,
} from './elastic-job.constants.js';
import { JobConfigurationError } from './errors/elastic-job.errors.js';
import type { ShardingContext } from './interfaces/sharding-context.interface.js';
import type {
  JobErrorHandler,
  JobShardingStrategy,
  ShardedJobOptions,
} from './interfaces/sharded-job-options.interface.js';
import {
  BUILT_IN_NAMES,
  customPlugins,
  resolveJobClass,
  resolveJobConfiguration,
} from './job/config/job-configuration.validator.js';
import type { JobDefinition } from './job/job-scheduler.js';

/**
 * Finds `@ShardedJob()` methods on every provider and controller (DiscoveryService + MetadataScanner) and
 * validates them, in `onModuleInit`: bad configuration fails here, before anything touches ZooKeeper.
 */
@Injectable()
export class ElasticJobExplorer implements OnModuleInit {
  private readonly logger = new Logger('ElasticJob');
  private definitions: JobDefinition[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    // Two forRoot() imports make two sessions registering the same instance id for every job: refused here.
    const modules = this.discovery.getProviders().filter((wrapper) => wrapper.instance instanceof ElasticJobExplorer);
    if (modules.length > 1) {
      throw new JobConfigurationError(
        undefined,
        'ElasticJobModule',
        `is imported with forRoot()/forRootAsync() ${modules.length} times in this app: import it once, in the root ` +
          `module (with isGlobal: true, or re-exported, for ElasticJobRegistry and ElasticJobOperator elsewhere)`,
      );
    }
    this.definitions = this.explore();
  }

  get jobs(): readonly JobDefinition[] {
    return this.definitions;
  }

  explore(): JobDefinition[] {
    const found: JobDefinition[] = [];
    const owners = new Map<string, string>();
    const provided = this.namedProviders();
    const known = {
      strategies: [...BUILT_IN_NAMES.strategies, ...provided.strategies.map((strategy) => strategy.type)],
      errorHandlers: [...BUILT_IN_NAMES.errorHandlers, ...provided.errorHandlers.map((handler) => handler.type)],
    };
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance: unknown = wrapper.instance;
      if (!instance || typeof instance !== 'object') continue;
      const prototype = Object.getPrototypeOf(instance) as object | null;
      if (!prototype) continue;
      for (const methodName of this.scanner.getAllMethodNames(prototype)) {
        const method = (instance as Record<string, unknown>)[methodName];
        if (typeof method !== 'function') continue;
        const options = this.reflector.get<ShardedJobOptions | undefined>(SHARDED_JOB_METADATA, method);
        if (!options) continue;
        const owner = `${instance.constructor.name}.${methodName}`;
        if (!wrapper.isDependencyTreeStatic()) {
          this.logger.warn(`@ShardedJob() on ${owner} is ignored: request-scoped providers cannot hold jobs`);
          continue;
        }
        const config = resolveJobConfiguration(options, known);
        const identity = resolveJobClass(options, owner);
        const previous = owners.get(config.jobName);
        if (previous)
          throw new JobConfigurationError(
            config.jobName,
            'jobName',
            `declared twice, on ${previous} and on ${owner}; job names must be unique`,
          );
        owners.set(config.jobName, owner);
        found.push({
          config,
          plugins: {
            ...customPlugins(options),
            providedStrategies: provided.strategies,
            providedErrorHandlers: provided.errorHandlers,
          },
          owner: identity,
          handler: (context: ShardingContext) =>
            (method as (context: ShardingContext) => unknown).call(instance, context),
        });
      }
    }
    return found;
  }

  /**
   * Providers decorated with @ElasticJobShardingStrategy(type) / @ElasticJobErrorHandler(type): each a plugin under
   * its name, calling the provider (which Nest built with its dependencies). A name given twice, a built-in name, a
   * missing method or a request-scoped provider is a JobConfigurationError naming it.
   */
  private namedProviders(): { strategies: JobShardingStrategy[]; errorHandlers: JobErrorHandler[] } {
    const strategies: JobShardingStrategy[] = [];
    const errorHandlers: JobErrorHandler[] = [];
    const names = new Map<string, string>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!instance || typeof instance !== 'object' || !wrapper.metatype) continue;
      const provider = instance as Record<string, unknown>;
      const className = instance.constructor.name;
      for (const [kind, metadata, method, builtIn, field] of [
        [
          'strategy',
          SHARDING_STRATEGY_PROVIDER_METADATA,
          'sharding',
          BUILT_IN_NAMES.strategies,
          'jobShardingStrategyType',
        ],
        [
          'error handler',
          ERROR_HANDLER_PROVIDER_METADATA,
          'handleException',
          BUILT_IN_NAMES.errorHandlers,
          'jobErrorHandlerType',
        ],
      ] as const) {
        const type = this.reflector.get<string | undefined>(metadata, instance.constructor);
        if (type === undefined) continue;
        const fail = (detail: string): never => {
          throw new JobConfigurationError(undefined, field, `the ${kind} provider ${className} ${detail}`);
        };
        if (typeof type !== 'string' || type.trim() === '') fail('needs a non-empty name');
        if ((builtIn as readonly string[]).includes(type)) fail(`cannot take the built-in name '${type}'`);
        if (names.has(`${kind}:${type}`))
          fail(`takes the name '${type}' already given to ${names.get(`${kind}:${type}`)}`);
        if (typeof provider[method] !== 'function') fail(`has no ${method}() method`);
        if (!wrapper.isDependencyTreeStatic()) fail('is request-scoped: a job plugin must be a singleton provider');
        names.set(`${kind}:${type}`, className);
        const call = (provider[method] as (...args: unknown[]) => unknown).bind(instance);
        if (kind === 'strategy') strategies.push({ type, sharding: call as JobShardingStrategy['sharding'] });
        else errorHandlers.push({ type, handleException: call as JobErrorHandler['handleException'] });
      }
    }
    return { strategies, errorHandlers };
  }
}
