import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ElasticJobErrorHandler,
  ElasticJobModule,
  ElasticJobRegistry,
  ElasticJobShardingStrategy,
  JobConfigurationError,
  ShardedJob,
  type JobInstance,
  type ShardingContext,
} from '../../lib/index.js';
import { appOptions, bootApp } from '../support/app.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * Error handlers and sharding strategies as Nest providers (issue 14, item 10): they inject the app's services,
 * jobs name them, and the config node holds the names as it holds ElasticJob's SPI names.
 */

afterEach(async () => {
  await releaseAll();
});

/** An app service the handler depends on. */
@Injectable()
class AlertService {
  readonly alerts: string[] = [];
  send(text: string): void {
    this.alerts.push(text);
  }
}

@Injectable()
@ElasticJobErrorHandler('ALERT')
class AlertingErrorHandler {
  constructor(private readonly alerts: AlertService) {}
  handleException(jobName: string, error: unknown, context: ShardingContext): void {
    this.alerts.send(`${jobName}#${context.shardingItem}: ${(error as Error).message}`);
  }
}

/** Every item to the first instance in ElasticJob's order: easy to see. */
@Injectable()
@ElasticJobShardingStrategy('ALL_TO_FIRST')
class AllToFirstStrategy {
  sharding(instances: readonly JobInstance[], _jobName: string, total: number): Map<string, number[]> {
    return new Map(
      instances.length > 0 ? [[instances[0]!.jobInstanceId, Array.from({ length: total }, (_, i) => i)]] : [],
    );
  }
}

@Injectable()
class FailingJob {
  @ShardedJob({
    jobName: 'alerted',
    cron: '* * * * * *',
    shardingTotalCount: 2,
    jobErrorHandlerType: 'ALERT',
    jobShardingStrategyType: 'ALL_TO_FIRST',
  })
  run(context: ShardingContext): void {
    if (context.shardingItem === 1) throw new Error('disk full');
  }
}

describe('plugins as Nest providers, named by jobs', () => {
  it('an injected error handler and a strategy provider run by name; the config node holds the names', async () => {
    const namespace = uniqueNamespace('plugin-providers');
    const providers = [AlertService, AlertingErrorHandler, AllToFirstStrategy, FailingJob];
    const a = await bootApp(appOptions(namespace, { instance: { ip: '10.5.0.1' } }), providers);
    hold(() => a.close());
    const b = await bootApp(appOptions(namespace, { instance: { ip: '10.5.0.2' } }), providers);
    hold(() => b.close());
    const sent = await eventually(
      () => [...a.get(AlertService).alerts, ...b.get(AlertService).alerts],
      (all) => all.length > 0,
      15_000,
      'an alert through the injected service',
    );
    expect(sent[0]).toBe('alerted#1: disk full');
    // ALL_TO_FIRST: one app holds both items (the first in ElasticJob's descending order: 10.5.0.2).
    await eventually(
      () => b.get(ElasticJobRegistry).getJobStatus('alerted').shardingItems,
      (items) => items.length === 2,
      15_000,
      'every item on the first instance',
    );
    expect(a.get(ElasticJobRegistry).getJobStatus('alerted').shardingItems).toEqual([]);
    const zk = await observer(namespace);
    const yaml = (await zk.getData('/alerted/config'))!.data.toString();
    expect(yaml).toContain('jobErrorHandlerType: ALERT');
    expect(yaml).toContain('jobShardingStrategyType: ALL_TO_FIRST');
  });

  it('refuses a provider under a built-in name, or a name given twice, before anything is written', async () => {
    @Injectable()
    @ElasticJobErrorHandler('LOG')
    class ShadowingHandler {
      handleException(): void {}
    }
    @Injectable()
    @ElasticJobShardingStrategy('SAME')
    class One {
      sharding(): Map<string, number[]> {
        return new Map();
      }
    }
    @Injectable()
    @ElasticJobShardingStrategy('SAME')
    class Two {
      sharding(): Map<string, number[]> {
        return new Map();
      }
    }
    for (const [providers, message] of [
      [[ShadowingHandler], /the error handler provider ShadowingHandler cannot take the built-in name 'LOG'/],
      [[One, Two], /takes the name 'SAME' already given to One/],
    ] as const) {
      @Module({
        imports: [
          ElasticJobModule.forRoot({ zookeeper: { serverLists: zkConnect(), namespace: uniqueNamespace('x') } }),
        ],
        providers: [...providers],
      })
      class AppModule {}
      const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
      hold(() => moduleRef.close());
      const error = await moduleRef.init().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JobConfigurationError);
      expect(String(error)).toMatch(message);
    }
  });
});
