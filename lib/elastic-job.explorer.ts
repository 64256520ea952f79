import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ELASTIC_JOB_MODULE_OPTIONS } from './elastic-job.module-definition.js';
import type { ElasticJobModuleOptions, TypedJobOptions } from './interfaces/module-options.interface.js';
import { prepareTypedJob, typedItemExecutor } from './job/plugins/typed-item-executors.js';
import type { ScriptPolicy } from './job/plugins/script-item-executor.js';
import { dayOfWeekNumberWarning } from './schedule/cron-preview.js';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import {
  ERROR_HANDLER_PROVIDER_METADATA,
  DATAFLOW_JOB_METADATA,
  EVENT_SUBSCRIBER_METADATA,
  JOB_LISTENER_METADATA,
  SHARDED_JOB_METADATA,
  SHARDING_STRATEGY_PROVIDER_METADATA,
} from './decorators/metadata-keys.js';
import type { EventSubscriberMetadata } from './decorators/on-elastic-job-event.decorator.js';
import type { DataflowJobHandler, DataflowJobOptions } from './interfaces/dataflow-job.interface.js';
import type { ElasticJobEvent } from './events/elastic-job-event.types.js';
import { ELASTIC_JOB_EVENT_TYPES } from './events/elastic-job-event.types.js';
import type { ElasticJobListenerOptions } from './interfaces/job-listener.interface.js';
import type { DiscoveredListener } from './listeners/job-listener-hooks.js';
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
import type { JobDefinition } from './job/scheduler/job-scheduler.js';

/** What a job's declaration brings beyond its options: its handler, and for typed jobs the type's parts. */
type DefinitionParts = Pick<JobDefinition, 'handler'> &
  Partial<Pick<JobDefinition, 'type' | 'dataflow' | 'joinsStored'>>;

/** An `@OnElasticJobEvent()` method. */
export interface DiscoveredSubscriber {
  name: string;
  types: EventSubscriberMetadata['types'];
  jobs: EventSubscriberMetadata['jobs'];
  call: (event: ElasticJobEvent) => unknown;
}

/**
 * Finds `@ShardedJob()` methods on every provider and controller (DiscoveryService + MetadataScanner), and the
 * `@OnElasticJobEvent()` methods and `@ElasticJobListener()` providers, and validates them, in `onModuleInit`: bad configuration fails here, before anything touches ZooKeeper.
 */
@Injectable()
export class ElasticJobExplorer implements OnModuleInit {
  private readonly logger = new Logger('ElasticJob');
  private definitions: JobDefinition[] = [];
  private subscribers: DiscoveredSubscriber[] = [];
  private listeners: DiscoveredListener[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    @Inject(ELASTIC_JOB_MODULE_OPTIONS) private readonly moduleOptions: ElasticJobModuleOptions,
  ) {}

  /** Which commands SCRIPT jobs may run here (the module's `scriptJobs`): none unless the app says so. */
  get scriptPolicy(): ScriptPolicy {
    const allow = this.moduleOptions?.scriptJobs?.allow;
    return allow === true ? { allow: true } : Array.isArray(allow) ? { allow: [...allow] } : { allow: false };
  }

  /**
   * A typed job's definition (HTTP, SCRIPT: docs/guide/http-and-script-jobs.md): its options validated as every
   * job's, its `type` stored as its identity in the root node where a class-based job keeps its class (as Java
   * ElasticJob stores `HTTP`), and its items run by the type's executor. A SCRIPT job whose command this instance may
   * not run is a JobConfigurationError naming `scriptJobs`.
   */
  typedDefinition(options: TypedJobOptions): JobDefinition {
    const policy = this.scriptPolicy;
    const { type, options: rest, joins } = prepareTypedJob(options, policy);
    const definition = this.definition({ ...rest, jobClass: rest.jobClass ?? type }, type, this.namedProviders(), {
      type,
      ...(joins ? { joinsStored: true as const } : {}),
      // runJob(): the type's executor with the job's own props.
      handler: (context: ShardingContext) =>
        typedItemExecutor(type, () => definition.config.props, policy)!.execute(context),
    });
    return definition;
  }

  /** The module's `jobs`: each typed job's definition; a SCRIPT job this instance may not run is left out, said loudly. */
  private typedJobs(): JobDefinition[] {
    const jobs = this.moduleOptions?.jobs ?? [];
    if (!Array.isArray(jobs)) throw new JobConfigurationError(undefined, 'jobs', 'must be a list of typed job options');
    const definitions: JobDefinition[] = [];
    for (const options of jobs) {
      try {
        definitions.push(this.typedDefinition(options));
      } catch (error) {
        if (!(error instanceof JobConfigurationError) || error.field !== 'scriptJobs') throw error;
        this.logger.error(`${error.message}: not registered on this instance`);
      }
    }
    return definitions;
  }

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
    this.definitions = [...this.explore(), ...this.typedJobs()];
    const jobNames = new Set(this.definitions.map((definition) => definition.config.jobName));
    this.subscribers = this.exploreSubscribers(jobNames);
    this.listeners = this.exploreListeners(jobNames);
  }

  get jobs(): readonly JobDefinition[] {
    return this.definitions;
  }

  /** `@OnElasticJobEvent()` methods, validated. */
  get eventSubscribers(): readonly DiscoveredSubscriber[] {
    return this.subscribers;
  }

  /** `@ElasticJobListener()` providers, validated. */
  get jobListeners(): readonly DiscoveredListener[] {
    return this.listeners;
  }

  private exploreSubscribers(jobNames: ReadonlySet<string>): DiscoveredSubscriber[] {
    const found: DiscoveredSubscriber[] = [];
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance: unknown = wrapper.instance;
      // A `useExisting` alias is the same instance again: its methods would subscribe twice.
      if (!instance || typeof instance !== 'object' || wrapper.isAlias) continue;
      const prototype = Object.getPrototypeOf(instance) as object | null;
      if (!prototype) continue;
      for (const methodName of this.scanner.getAllMethodNames(prototype)) {
        const method = (instance as Record<string, unknown>)[methodName];
        if (typeof method !== 'function') continue;
        const metadata = this.reflector.get<EventSubscriberMetadata | undefined>(EVENT_SUBSCRIBER_METADATA, method);
        if (!metadata) continue;
        const name = `${instance.constructor.name}.${methodName}`;
        const fail = (field: string, detail: string): never => {
          throw new JobConfigurationError(undefined, field, `@OnElasticJobEvent() on ${name} ${detail}`);
        };
        if (!wrapper.isDependencyTreeStatic()) fail('OnElasticJobEvent', 'is on a request-scoped provider');
        for (const type of metadata.types ?? [])
          if (!(ELASTIC_JOB_EVENT_TYPES as readonly string[]).includes(type))
            fail('type', `names '${type}', not an event type; one of: ${ELASTIC_JOB_EVENT_TYPES.join(', ')}, or '*'`);
        for (const job of metadata.jobs ?? [])
          if (!jobNames.has(job)) fail('jobs', `names '${job}', not a job of this app (${[...jobNames].join(', ')})`);
        found.push({
          name,
          types: metadata.types,
          jobs: metadata.jobs,
          call: (event) => (method as (event: ElasticJobEvent) => unknown).call(instance, event),
        });
      }
    }
    return found;
  }

  private exploreListeners(jobNames: ReadonlySet<string>): DiscoveredListener[] {
    const found: DiscoveredListener[] = [];
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!instance || typeof instance !== 'object' || !wrapper.metatype || wrapper.isAlias) continue;
      const options = this.reflector.get<ElasticJobListenerOptions | undefined>(
        JOB_LISTENER_METADATA,
        instance.constructor,
      );
      if (!options) continue;
      const name = instance.constructor.name;
      const fail = (field: string, detail: string): never => {
        throw new JobConfigurationError(undefined, field, `the job listener ${name} ${detail}`);
      };
      const listener = instance as DiscoveredListener['listener'];
      const methods = [
        'beforeJobExecuted',
        'afterJobExecuted',
        'beforeJobExecutedAtLastStarted',
        'afterJobExecutedAtLastCompleted',
      ] as const;
      if (!methods.some((method) => typeof listener[method] === 'function'))
        fail('ElasticJobListener', `has none of the listener methods (${methods.join(', ')})`);
      if (!wrapper.isDependencyTreeStatic()) fail('ElasticJobListener', 'is request-scoped: it must be a singleton');
      for (const job of options.jobs ?? [])
        if (!jobNames.has(job)) fail('jobs', `names '${job}', not a job of this app (${[...jobNames].join(', ')})`);
      if (options.order !== undefined && !Number.isFinite(options.order))
        fail('order', `must be a number, got ${JSON.stringify(options.order)}`);
      for (const field of ['startedTimeoutMilliseconds', 'completedTimeoutMilliseconds'] as const) {
        const value = options[field];
        if (value !== undefined && (!Number.isInteger(value) || value <= 0))
          fail(field, `must be an integer > 0 (a wait without a bound can deadlock), got ${JSON.stringify(value)}`);
      }
      found.push({ name, listener, options });
    }
    return found;
  }

  explore(): JobDefinition[] {
    const found: JobDefinition[] = [];
    const owners = new Map<string, string>();
    const provided = this.namedProviders();
    /** One job: validated, its name unique in the app. */
    const define = (options: ShardedJobOptions, owner: string, rest: DefinitionParts): void => {
      const definition = this.definition(options, owner, provided, rest);
      const { jobName } = definition.config;
      const previous = owners.get(jobName);
      if (previous)
        throw new JobConfigurationError(
          jobName,
          'jobName',
          `declared twice, on ${previous} and on ${owner}; job names must be unique`,
        );
      owners.set(jobName, owner);
      found.push(definition);
    };
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance: unknown = wrapper.instance;
      // A `useExisting` alias is the same instance again, not a second declaration of its jobs.
      if (!instance || typeof instance !== 'object' || wrapper.isAlias) continue;
      const prototype = Object.getPrototypeOf(instance) as object | null;
      if (!prototype) continue;
      const dataflow = this.reflector.get<DataflowJobOptions | undefined>(DATAFLOW_JOB_METADATA, instance.constructor);
      if (dataflow) this.defineDataflow(dataflow, instance, wrapper.isDependencyTreeStatic(), define);
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
        define(options, owner, {
          handler: (context: ShardingContext) =>
            (method as (context: ShardingContext) => unknown).call(instance, context),
        });
      }
    }
    return found;
  }

  /**
   * A job added at run time (ElasticJobRegistry.addJob), validated as a decorated one: its identity is
   * `jobClass`, or `addJob(jobName)` (the same on every instance that adds it).
   */
  runtimeDefinition(options: ShardedJobOptions, handler: (context: ShardingContext) => unknown): JobDefinition {
    const jobName = typeof options?.jobName === 'string' ? options.jobName : undefined;
    if (typeof handler !== 'function')
      throw new JobConfigurationError(jobName, 'handler', 'addJob() needs a handler function (context) => ...');
    // Its default identity, the same on every instance that adds it (a bad jobName fails in definition()).
    return this.definition(options, `addJob(${jobName ?? ''})`, this.namedProviders(), { handler });
  }

  /**
   * A job's definition from its options, validated as every job's are (the config, `maxConcurrentItems`), its
   * strategy and error handler names resolved against the built-ins and the app's named providers.
   */
  private definition(
    options: ShardedJobOptions,
    owner: string,
    provided: { strategies: JobShardingStrategy[]; errorHandlers: JobErrorHandler[] },
    rest: DefinitionParts,
  ): JobDefinition {
    const config = resolveJobConfiguration(options, {
      strategies: [...BUILT_IN_NAMES.strategies, ...provided.strategies.map((strategy) => strategy.type)],
      errorHandlers: [...BUILT_IN_NAMES.errorHandlers, ...provided.errorHandlers.map((handler) => handler.type)],
    });
    // Valid, but numbered in a dialect its writer may not have meant: warned with the days it fires on.
    const dayWarning = config.cron === '' ? undefined : dayOfWeekNumberWarning(options.cron!, config.timeZone);
    if (dayWarning) new Logger(`ElasticJob:${config.jobName}`).warn(dayWarning);
    const cap = options.maxConcurrentItems;
    if (cap !== undefined && (!Number.isInteger(cap) || cap < 1))
      throw new JobConfigurationError(
        config.jobName,
        'maxConcurrentItems',
        `must be an integer >= 1 (items run at once in this process), got ${JSON.stringify(cap)}`,
      );
    return {
      ...(cap === undefined ? {} : { maxConcurrentItems: cap }),
      config,
      plugins: {
        ...customPlugins(options),
        providedStrategies: provided.strategies,
        providedErrorHandlers: provided.errorHandlers,
      },
      owner: resolveJobClass(options, owner),
      ...(typeof options.cron === 'string' ? { writtenCron: options.cron } : {}),
      ...rest,
    };
  }

  /** A `@DataflowJob()` provider: its fetchData/processData, checked, as a job of type DATAFLOW. */
  private defineDataflow(
    options: DataflowJobOptions,
    instance: object,
    singleton: boolean,
    define: (options: ShardedJobOptions, owner: string, rest: DefinitionParts) => void,
  ): void {
    const owner = instance.constructor.name;
    const jobName = typeof options?.jobName === 'string' ? options.jobName : undefined;
    if (!singleton) {
      this.logger.warn(`@DataflowJob() on ${owner} is ignored: request-scoped providers cannot hold jobs`);
      return;
    }
    const job = instance as Partial<DataflowJobHandler<unknown>>;
    for (const method of ['fetchData', 'processData'] as const)
      if (typeof job[method] !== 'function')
        throw new JobConfigurationError(jobName, method, `@DataflowJob() on ${owner} needs a ${method}() method`);
    if (options.streaming !== undefined && typeof options.streaming !== 'boolean')
      throw new JobConfigurationError(
        jobName,
        'streaming',
        `must be true or false, got ${JSON.stringify(options.streaming)}`,
      );
    const handler = job as DataflowJobHandler<unknown>;
    define(options, owner, {
      type: 'DATAFLOW',
      dataflow: { handler, streaming: options.streaming ?? false },
      // runJob(): one fetch and, with data, one process (ElasticJob's one-off dataflow).
      handler: async (context: ShardingContext) => {
        const data = await handler.fetchData(context);
        if (data && data.length > 0) await handler.processData(context, data);
        return data;
      },
    });
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
