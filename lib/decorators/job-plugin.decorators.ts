import { SetMetadata } from '@nestjs/common';
import { ERROR_HANDLER_PROVIDER_METADATA, SHARDING_STRATEGY_PROVIDER_METADATA } from './metadata-keys.js';

/**
 * Makes a provider an error handler that jobs name: `jobErrorHandlerType: 'ALERT'` in `@ShardedJob()` (and in the
 * config node, as ElasticJob names its SPI handlers). The class implements `handleException(jobName, error,
 * context)` and may inject anything (an alerting service). One name per handler, not a built-in one.
 * @publicApi
 */
export function ElasticJobErrorHandler(type: string): ClassDecorator {
  return SetMetadata(ERROR_HANDLER_PROVIDER_METADATA, type);
}

/**
 * Makes a provider a sharding strategy that jobs name: `jobShardingStrategyType: 'ZONE_AWARE'`. The class
 * implements `sharding(instances, jobName, shardingTotalCount)` and may inject anything.
 * @publicApi
 */
export function ElasticJobShardingStrategy(type: string): ClassDecorator {
  return SetMetadata(SHARDING_STRATEGY_PROVIDER_METADATA, type);
}
