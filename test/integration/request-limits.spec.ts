import { Injectable, Logger } from '@nestjs/common';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ElasticJobRegistry, JobConfigurationError, ShardedJob, type ShardingContext } from '../../lib/index.js';
import type { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import { appOptions, bootApp } from '../support/app.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, startRegistry, uniqueNamespace } from '../support/zk.js';

/**
 * ZooKeeper drops the connection of a request over jute.maxbuffer (1 MiB). A long job name makes every path long,
 * so 5000 items put well over a megabyte in each of the firing's multi requests (sharding: about 2.5 MB;
 * running markers: about 1.4 MB): each must be cut.
 */

afterEach(async () => {
  await releaseAll();
  vi.restoreAllMocks();
});

const LONG_NAME = 'a-job-whose-name-is-long-so-that-every-path-below-it-is-long-too'.repeat(3);
const ITEMS = 5000;
/** How many times each item ran. */
const runsOf: number[] = Array.from({ length: ITEMS }, () => 0);
/** Who `sharding/{i}/running` named while the first and last items ran. */
const markers: Array<string | undefined> = [];
let watcher: ZookeeperRegistryCenter | undefined;

@Injectable()
class ManyItemsJob {
  @ShardedJob({ jobName: LONG_NAME, cron: '*/2 * * * * *', shardingTotalCount: ITEMS })
  async run(context: ShardingContext): Promise<void> {
    // Counted by item, not by the second an item starts in: the firing lets the event loop turn between its
    // starts (mapBounded), so under load its 5000 starts may span a second's boundary.
    runsOf[context.shardingItem]!++;
    if (context.shardingItem === 0 || context.shardingItem === ITEMS - 1) {
      markers.push((await watcher?.getData(`/${LONG_NAME}/sharding/${context.shardingItem}/running`))?.data.toString());
    }
  }
}

describe("ZooKeeper's request limit", () => {
  it(`${ITEMS} items with long paths: sharded and fired in requests under the limit, the connection never dropped`, async () => {
    const namespace = uniqueNamespace('limits');
    runsOf.fill(0);
    markers.length = 0;
    // The claim is about the app's connection. The observer only reads the markers, in the same process: with the
    // harness's 4 s session a loaded host's stalls once dropped it, and its line was counted as the app's.
    const reader = await startRegistry({ namespace, sessionTimeoutMilliseconds: 30_000 });
    hold(() => reader.close());
    watcher = reader;
    const warnings = vi.spyOn(Logger.prototype, 'warn');
    const app = await bootApp(
      appOptions(namespace, { zookeeper: { ...appOptions(namespace).zookeeper, sessionTimeoutMilliseconds: 10_000 } }),
      [ManyItemsJob],
    );
    hold(() => app.close());
    const registry = app.get(ElasticJobRegistry);
    // Someone listens to the events: 5000 item events per firing must not slow the firings down.
    let completions = 0;
    const subscription = registry.events$.subscribe((event) => {
      if (event.type === 'item.completed') completions++;
    });
    hold(() => subscription.unsubscribe());
    const complete = (): number => Math.min(...runsOf);
    await eventually(complete, (firings) => firings >= 2, 60_000, 'two firings running every item');
    expect(registry.getJobStatus(LONG_NAME).shardingItems).toHaveLength(ITEMS);
    await eventually(
      () => completions,
      (n) => n >= 2 * ITEMS,
      10_000,
      'the item events of two firings',
    );
    expect(registry.isConnected()).toBe(true);
    expect(warnings.mock.calls.map((call) => String(call[0])).filter((log) => /disconnected|lost/.test(log))).toEqual(
      [],
    );
    // Running markers were written for the first and the last item, which went in different requests.
    await eventually(
      () => markers.length,
      (n) => n >= 4,
      10_000,
      'the markers of two firings',
    );
    expect(new Set(markers)).toEqual(new Set([registry.getJobStatus(LONG_NAME).instanceId]));
  }, 120_000);

  it('a shardingTotalCount beyond the maximum is a JobConfigurationError naming the field, before anything is written', async () => {
    @Injectable()
    class TooManyItems {
      @ShardedJob({ jobName: 'too-many', cron: '* * * * * *', shardingTotalCount: 100_000 })
      run(): void {}
    }
    const namespace = uniqueNamespace('too-many');
    const error = await bootApp(appOptions(namespace), [TooManyItems]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobConfigurationError);
    expect(error).toMatchObject({ jobName: 'too-many', field: 'shardingTotalCount' });
    expect((error as Error).message).toMatch(/more than the 10000 items/);
    const zk = await observer(namespace);
    expect(await zk.exists('/too-many')).toBeUndefined();
  });

  it('a shardingTotalCount beyond the maximum written into the config node is refused, and the job goes on', async () => {
    @Injectable()
    class SmallJob {
      static runs = 0;
      @ShardedJob({ jobName: 'small', cron: '* * * * * *', shardingTotalCount: 2 })
      run(): void {
        SmallJob.runs++;
      }
    }
    const namespace = uniqueNamespace('too-many-stored');
    const errors = vi.spyOn(Logger.prototype, 'error');
    const app = await bootApp(appOptions(namespace), [SmallJob]);
    hold(() => app.close());
    const zk = await observer(namespace);
    const stored = (await zk.getData('/small/config'))!.data.toString();
    await zk.setData(
      '/small/config',
      Buffer.from(stored.replace('shardingTotalCount: 2', 'shardingTotalCount: 100000')),
    );
    await eventually(
      () => errors.mock.calls.map((call) => String(call[0])),
      (logs) =>
        logs.some((log) => log.includes(`refusing the config node /${namespace}/small/config: 'shardingTotalCount'`)),
      10_000,
      'the refusal',
    );
    const runsAfter = SmallJob.runs;
    await eventually(
      () => SmallJob.runs,
      (runs) => runs >= runsAfter + 4,
      10_000,
      'two more firings of both items',
    );
    expect(app.get(ElasticJobRegistry).getJobStatus('small').shardingItems).toEqual([0, 1]);
  });
});
