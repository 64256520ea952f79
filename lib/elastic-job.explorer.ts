import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { SHARDED_JOB_METADATA } from './elastic-job.constants.js';
import { JobConfigurationError } from './errors/elastic-job.errors.js';
import type { ShardingContext } from './interfaces/sharding-context.interface.js';
import type { ShardedJobOptions } from './interfaces/sharded-job-options.interface.js';
import { customPlugins, resolveJobClass, resolveJobConfiguration } from './job/config/job-configuration.validator.js';
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
        const config = resolveJobConfiguration(options);
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
          plugins: customPlugins(options),
          owner: identity,
          handler: (context: ShardingContext) =>
            (method as (context: ShardingContext) => unknown).call(instance, context),
        });
      }
    }
    return found;
  }
}
