import type { Logger } from '@nestjs/common';
import type {
  ErrorHandlerType,
  JobErrorHandler,
  JobShardingStrategy,
} from '../../interfaces/sharded-job-options.interface.js';
import { BUILT_IN_ERROR_HANDLER_TYPES, builtInErrorHandler, type BuiltInErrorHandler } from './job-error-handlers.js';
import { BUILT_IN_ITEM_EXECUTORS, type JobHandler, type JobItemExecutor } from './item-executor.js';
import { BUILT_IN_SHARDING_STRATEGIES } from './sharding-strategies.js';

/**
 * The sharding strategies, error handlers and item executors one job can use, found by type name as ElasticJob
 * finds its SPI implementations: the built-ins under ElasticJob's names, then the job's own custom ones under
 * their `type`. The job's configuration (and its config node) holds only the names; the item executor is chosen
 * by the job's type (SIMPLE for a `@ShardedJob()` method).
 */
/** A job's own strategy and handler (objects in its options), and the app's named providers. */
export interface CustomPlugins {
  strategy?: JobShardingStrategy;
  errorHandler?: JobErrorHandler;
  providedStrategies?: readonly JobShardingStrategy[];
  providedErrorHandlers?: readonly JobErrorHandler[];
}

/**
 * One per job, so it holds only what differs between jobs: the custom plugins (none for most jobs), and the
 * built-in handler and executor it was asked for, made on first use (issue 19: ten thousand jobs in a process).
 */
export class JobPlugins {
  /** Custom ones by type, the job's own last (it wins over a provider of the same type); undefined: none. */
  private readonly customStrategies: ReadonlyMap<string, JobShardingStrategy> | undefined;
  private readonly customErrorHandlers: ReadonlyMap<string, JobErrorHandler> | undefined;
  private readonly builtInErrorHandlers: Partial<Record<ErrorHandlerType, BuiltInErrorHandler>> = {};
  private readonly builtInItemExecutors: Record<string, JobItemExecutor> = {};

  constructor(
    private readonly logger: Logger,
    custom: CustomPlugins = {},
    private readonly handler?: JobHandler,
    /** The job's current properties, read by the alert handlers at each failure. */
    private readonly props: () => Readonly<Record<string, string>> = () => ({}),
  ) {
    this.customStrategies = byType(custom.providedStrategies, custom.strategy);
    this.customErrorHandlers = byType(custom.providedErrorHandlers, custom.errorHandler);
  }

  strategy(type: string): JobShardingStrategy | undefined {
    return (
      this.customStrategies?.get(type) ??
      (isOwnKey(BUILT_IN_SHARDING_STRATEGIES, type) ? BUILT_IN_SHARDING_STRATEGIES[type] : undefined)
    );
  }

  errorHandler(type: string): JobErrorHandler | undefined {
    const custom = this.customErrorHandlers?.get(type);
    if (custom) return custom;
    if (!isBuiltInErrorHandlerType(type)) return undefined;
    return (this.builtInErrorHandlers[type] ??= builtInErrorHandler(type, this.logger, this.props));
  }

  itemExecutor(type: string): JobItemExecutor | undefined {
    if (!this.handler || !isOwnKey(BUILT_IN_ITEM_EXECUTORS, type)) return undefined;
    return (this.builtInItemExecutors[type] ??= BUILT_IN_ITEM_EXECUTORS[type]!(this.handler));
  }

  /** The job stops here: the built-in handlers made for it close (the alert handlers' deliveries under way). */
  async close(): Promise<void> {
    await Promise.all(Object.values(this.builtInErrorHandlers).map((handler) => handler.close?.()));
  }

  /** Names this job can resolve, for validating a configuration that names them: built-ins first. */
  names(): { strategies: string[]; errorHandlers: string[]; itemExecutors: string[] } {
    return {
      strategies: withCustom(Object.keys(BUILT_IN_SHARDING_STRATEGIES), this.customStrategies),
      errorHandlers: withCustom([...BUILT_IN_ERROR_HANDLER_TYPES], this.customErrorHandlers),
      itemExecutors: this.handler ? Object.keys(BUILT_IN_ITEM_EXECUTORS) : [],
    };
  }
}

function byType<P extends { type: string }>(
  provided: readonly P[] | undefined,
  own: P | undefined,
): ReadonlyMap<string, P> | undefined {
  if (!provided?.length && !own) return undefined;
  const map = new Map<string, P>();
  for (const plugin of provided ?? []) map.set(plugin.type, plugin);
  if (own) map.set(own.type, own);
  return map;
}

function withCustom(builtIns: string[], custom: ReadonlyMap<string, unknown> | undefined): string[] {
  return [...builtIns, ...[...(custom?.keys() ?? [])].filter((type) => !builtIns.includes(type))];
}

/** An own key only: a type named `constructor` or `toString` is not a built-in. */
function isOwnKey<T extends object>(record: T, key: string): key is Extract<keyof T, string> {
  return Object.hasOwn(record, key);
}

function isBuiltInErrorHandlerType(type: string): type is ErrorHandlerType {
  return (BUILT_IN_ERROR_HANDLER_TYPES as readonly string[]).includes(type);
}
