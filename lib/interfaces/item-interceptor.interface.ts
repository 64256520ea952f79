import type { ShardingContext } from './sharding-context.interface.js';

/**
 * Wraps every item execution of every job on this instance (docs/guide/jobs-and-sharding.md, "Item interceptors"):
 * called with the item's context and `next`, which runs the item (and the interceptors after this one) and settles as
 * the item does. Return what `next()` returns (or rethrow what it throws): that is the item's result. For tracing (a
 * span made active around `next()`, so the handler's own spans are its children), context propagation, timing. Register
 * with `ElasticJobRegistry.useItemInterceptor()` before the application bootstraps (in `onModuleInit`).
 */
export type ItemInterceptor = (context: ShardingContext, next: () => Promise<unknown>) => Promise<unknown>;
