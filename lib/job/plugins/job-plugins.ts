import type { Logger } from '@nestjs/common';
import type { JobErrorHandler, JobShardingStrategy } from '../../interfaces/sharded-job-options.interface.js';
import { BUILT_IN_ERROR_HANDLER_TYPES, builtInErrorHandler } from '../execution/job-error-handlers.js';
import { BUILT_IN_ITEM_EXECUTORS, type JobHandler, type JobItemExecutor } from '../execution/item-executor.js';
import { BUILT_IN_SHARDING_STRATEGIES } from '../sharding/strategies/sharding-strategies.js';

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

export class JobPlugins {
  private readonly strategies = new Map<string, JobShardingStrategy>(Object.entries(BUILT_IN_SHARDING_STRATEGIES));
  private readonly errorHandlers = new Map<string, JobErrorHandler>();
  private readonly itemExecutors = new Map<string, JobItemExecutor>();

  constructor(logger: Logger, custom: CustomPlugins = {}, handler?: JobHandler) {
    for (const type of BUILT_IN_ERROR_HANDLER_TYPES) this.errorHandlers.set(type, builtInErrorHandler(type, logger));
    if (handler)
      for (const [type, create] of Object.entries(BUILT_IN_ITEM_EXECUTORS))
        this.itemExecutors.set(type, create(handler));
    for (const strategy of custom.providedStrategies ?? []) this.strategies.set(strategy.type, strategy);
    for (const errorHandler of custom.providedErrorHandlers ?? [])
      this.errorHandlers.set(errorHandler.type, errorHandler);
    if (custom.strategy) this.strategies.set(custom.strategy.type, custom.strategy);
    if (custom.errorHandler) this.errorHandlers.set(custom.errorHandler.type, custom.errorHandler);
  }

  strategy(type: string): JobShardingStrategy | undefined {
    return this.strategies.get(type);
  }

  errorHandler(type: string): JobErrorHandler | undefined {
    return this.errorHandlers.get(type);
  }

  itemExecutor(type: string): JobItemExecutor | undefined {
    return this.itemExecutors.get(type);
  }

  /** Names this job can resolve, for validating a configuration that names them. */
  names(): { strategies: string[]; errorHandlers: string[]; itemExecutors: string[] } {
    return {
      strategies: [...this.strategies.keys()],
      errorHandlers: [...this.errorHandlers.keys()],
      itemExecutors: [...this.itemExecutors.keys()],
    };
  }
}
