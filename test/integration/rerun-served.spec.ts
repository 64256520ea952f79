import { Injectable, Logger } from '@nestjs/common';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ElasticJobListener,
  ElasticJobOperator,
  ElasticJobRegistry,
  ShardedJob,
  type ShardingContext,
  type ShardingContexts,
} from '../../lib/index.js';
import { JobNodePath } from '../../lib/job/paths.js';
import { appOptions, bootApp } from '../support/app.js';
import { appRegistryCenter } from '../support/jobs.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace } from '../support/zk.js';

/**
 * A rerun is "start the item after I asked" (docs/operations/operator-api.md, "Running items again"): asked while a
 * firing waits before its items (its resharding, or its listeners, as here), it is served by that firing's start of
 * the item. A workflow's hand-over met this: a step's item ran in the firing and then again in the rerun queued behind
 * it (workflow-faults.spec, SIGKILL of the coordinator).
 */

afterEach(async () => {
  await releaseAll();
});

@Injectable()
class Gate {
  release!: () => void;
  readonly held = new Promise<void>((resolve) => (this.release = resolve));
  entered = 0;
  readonly runs: number[] = [];
  readonly firings: number[][] = [];
}

@Injectable()
class GatedJob {
  constructor(private readonly gate: Gate) {}

  @ShardedJob({ jobName: 'gated', cron: '0 0 0 1 1 *', shardingTotalCount: 2 })
  run(context: ShardingContext): void {
    this.gate.runs.push(context.shardingItem);
  }
}

/** Holds the first firing after its items are known and before they start. */
@ElasticJobListener({ jobs: ['gated'] })
class HoldFirstFiring implements ElasticJobListener {
  constructor(private readonly gate: Gate) {}

  async beforeJobExecuted(): Promise<void> {
    if (++this.gate.entered === 1) await this.gate.held;
  }

  afterJobExecuted(contexts: ShardingContexts): void {
    this.gate.firings.push(contexts.shardingItems);
  }
}

describe('a rerun asked while a firing waits before its items', () => {
  it('is served by that firing starting the item: the item runs once, no second firing', async () => {
    const namespace = uniqueNamespace('rerun-served');
    const app = await bootApp(appOptions(namespace), [Gate, GatedJob, HoldFirstFiring]);
    hold(() => app.close());
    const logs = vi.spyOn(Logger.prototype, 'log');
    hold(() => logs.mockRestore());
    const registry = app.get(ElasticJobRegistry);
    const gate = app.get(Gate);
    const me = registry.getJobStatus('gated').instanceId;
    await registry.trigger('gated');
    await eventually(
      () => gate.entered,
      (entered) => entered === 1,
      15_000,
      'the firing held before its items',
    );

    const operator = app.get(ElasticJobOperator);
    expect(await operator.rerunItem('gated', 1)).toEqual({ jobName: 'gated', item: 1, instanceId: me });
    // Taken by this instance (the node consumed) and queued behind the held firing.
    const zk = await observer(namespace);
    await eventually(
      () => zk.exists(new JobNodePath('gated').rerun(me)),
      (node) => node === undefined,
      15_000,
      'the rerun taken',
    );
    expect(gate.runs).toEqual([]);
    // The app's registry center has read zxids from ZooKeeper's frames, at least as far as the job's config node
    // (what orders a rerun reaching the executor after a firing started, rerun-order.ts).
    const config = await zk.getData('/gated/config');
    expect(appRegistryCenter(app).seenZxid()).toBeGreaterThanOrEqual(config!.stat.mzxid);
    gate.release();

    await eventually(
      () => ({ firings: gate.firings.length, firing: registry.getJobStatus('gated').firing }),
      (state) => state.firings >= 1 && !state.firing,
      15_000,
      'the firing over, nothing after it',
    );
    expect(gate.firings).toEqual([[0, 1]]);
    expect([...gate.runs].sort()).toEqual([0, 1]);
    const said = logs.mock.calls.map((call) => String(call[0]));
    expect(said).toContain('rerun of items [1] served by the firing starting them now');
  });
});
