import type { Logger } from '@nestjs/common';
import type { ElasticJobListener } from '../decorators/elastic-job-listener.decorator.js';
import { describeError } from '../errors/elastic-job.errors.js';
import type {
  DistributeOnceElasticJobListener,
  ElasticJobListenerOptions,
  ShardingContexts,
} from '../interfaces/job-listener.interface.js';
import type { FiringHooks } from '../job/events/execution-events.js';
import type { JobScheduler } from '../job/scheduler/job-scheduler.js';

export const DEFAULT_DISTRIBUTE_ONCE_TIMEOUT_MS = 60_000;

/** A provider decorated with `@ElasticJobListener()`, validated by the explorer. */
export interface DiscoveredListener {
  /** Its class name, for logs. */
  name: string;
  listener: ElasticJobListener & DistributeOnceElasticJobListener;
  options: ElasticJobListenerOptions;
}

/** Lower `order` first (ElasticJob's order()), then by class name so that every instance agrees. */
export function byOrder(a: DiscoveredListener, b: DiscoveredListener): number {
  const order = (l: DiscoveredListener) => l.options.order ?? Number.MAX_SAFE_INTEGER;
  return order(a) - order(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/**
 * The firing hooks of one job for its listeners: each plain listener in order, awaited; then, for the
 * distribute-once ones, one round on the job's `guarantee` nodes per firing and kind, whose last instance calls
 * their methods in order (one round for all of them: they share ElasticJob's nodes). Whatever a listener throws,
 * and a round that times out, is logged naming it; the firing goes on.
 */
export function listenerHooks(
  listeners: readonly DiscoveredListener[],
  job: JobScheduler,
  logger: Logger,
): FiringHooks {
  const ordered = [...listeners].sort(byOrder);
  const once = (kind: 'started' | 'completed') =>
    ordered.filter(({ listener }) =>
      kind === 'started' ? listener.beforeJobExecutedAtLastStarted : listener.afterJobExecutedAtLastCompleted,
    );
  const startedOnce = once('started');
  const completedOnce = once('completed');
  const timeout = (
    group: readonly DiscoveredListener[],
    field: 'startedTimeoutMilliseconds' | 'completedTimeoutMilliseconds',
  ) => Math.max(...group.map(({ options }) => options[field] ?? DEFAULT_DISTRIBUTE_ONCE_TIMEOUT_MS));

  const call = async (name: string, method: string, run: () => unknown): Promise<void> => {
    try {
      await run();
    } catch (error) {
      logger.warn(`job listener ${name}.${method}() failed: ${describeError(error)}`);
    }
  };

  const round = async (
    kind: 'started' | 'completed',
    group: readonly DiscoveredListener[],
    contexts: ShardingContexts,
  ): Promise<void> => {
    // Only firings the whole cluster takes part in: a catch-up after one instance reconnected, or a failover run,
    // is this instance's alone, and its round could only time out (and its clean-up break a real round).
    if (group.length === 0 || contexts.shardingItems.length === 0 || contexts.source !== 'NORMAL_TRIGGER') return;
    const method = kind === 'started' ? 'beforeJobExecutedAtLastStarted' : 'afterJobExecutedAtLastCompleted';
    try {
      await job.distributeOnce(
        kind,
        contexts.shardingItems,
        timeout(group, kind === 'started' ? 'startedTimeoutMilliseconds' : 'completedTimeoutMilliseconds'),
        async () => {
          for (const { name, listener } of group) await call(name, method, () => listener[method]?.(contexts));
        },
      );
    } catch (error) {
      logger.warn(
        `distribute-once listeners (${group.map(({ name }) => name).join(', ')}) skipped ${method}(): ` +
          describeError(error),
      );
    }
  };

  return {
    async beforeFiring(contexts) {
      for (const { name, listener } of ordered)
        if (listener.beforeJobExecuted)
          await call(name, 'beforeJobExecuted', () => listener.beforeJobExecuted?.(contexts));
      await round('started', startedOnce, contexts);
    },
    async afterFiring(contexts) {
      for (const { name, listener } of ordered)
        if (listener.afterJobExecuted)
          await call(name, 'afterJobExecuted', () => listener.afterJobExecuted?.(contexts));
      await round('completed', completedOnce, contexts);
    },
  };
}
