import { Injectable, Logger } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ElasticJobRegistry, ShardedJob, type ShardingContext } from '../../lib/index.js';
import { appOptions, bootApp } from '../support/app.js';
import { hold, observer, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace } from '../support/zk.js';

/**
 * Deleting `instances/{id}` is how ElasticJob's lifecycle API (JobOperateAPI.shutdown) and its console shut a job
 * down on one instance. Two apps in one process, told apart by `instance.ip`.
 */

afterEach(async () => {
  await releaseAll();
  vi.restoreAllMocks();
});

interface Run {
  ip: string;
  item: number;
  start: number;
  end: number;
  aborted: boolean;
}
const runs: Run[] = [];
/** Items hold this long unless their signal aborts: long enough to be running when the node is deleted. */
let holdMs = 0;

@Injectable()
class LongItemsJob {
  @ShardedJob({ jobName: 'operated', cron: '* * * * * *', shardingTotalCount: 4 })
  async run(context: ShardingContext): Promise<void> {
    const start = Date.now();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, holdMs);
      context.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
    runs.push({
      ip: ipOf(context.taskId),
      item: context.shardingItem,
      start,
      end: Date.now(),
      aborted: context.signal.aborted,
    });
  }
}

/** The instance's IP, from the task id `{job}@-@{items}@-@READY@-@{ip}@-@{pid}`. */
function ipOf(taskId: string): string {
  return taskId.split('@-@').at(-2)!;
}

async function bootAt(namespace: string, ip: string): Promise<TestingModule> {
  const app = await bootApp(appOptions(namespace, { instance: { ip }, shutdownTimeoutMilliseconds: 5000 }), [
    LongItemsJob,
  ]);
  hold(() => app.close());
  return app;
}

const status = (app: TestingModule) => app.get(ElasticJobRegistry).getJobStatus('operated');

describe("an operator's deletion of instances/{id}", () => {
  it('shuts the job down on that instance: trigger stopped, signals aborted, leadership and markers given up at once, reported in status', async () => {
    const namespace = uniqueNamespace('operator');
    runs.length = 0;
    holdMs = 2500;
    const warnings = vi.spyOn(Logger.prototype, 'warn');
    const zk = await observer(namespace);
    const a = await bootAt(namespace, '127.0.0.11');
    await eventually(
      () => status(a).isLeader,
      (leader) => leader,
      10_000,
      'the first app to lead',
    );
    const b = await bootAt(namespace, '127.0.0.12');
    // Both run items: each holds 2 of the 4, and a's are running right now.
    await eventually(
      () => [status(a).runningItems.length, status(b).shardingItems.length],
      ([running, bItems]) => running === 2 && bItems === 2,
      15_000,
      'a running its two items',
    );
    const aId = status(a).instanceId;
    const bId = status(b).instanceId;
    const deletedAt = Date.now();
    await zk.remove(`/operated/instances/${aId}`);

    await eventually(
      () => status(a).shutdown,
      (shutdown) => shutdown?.by === 'operator',
      10_000,
      'a shut down by the operator',
    );
    expect(status(a)).toMatchObject({ registered: false, isLeader: false, nextFireTime: undefined });
    expect(status(a).shutdown?.reason).toContain(`/${namespace}/operated/instances/${aId} was deleted`);
    // Its running items were told: each ended by its signal's abort, not by its 2.5 s hold (a bound of wall time on
    // the abort failed a loaded CI run at 1127 ms; the order is what the shutdown promises).
    const aborted = runs.filter((run) => run.ip === '127.0.0.11' && run.aborted);
    expect(aborted.length).toBe(2);
    // The leader node went at once, so b leads and takes every item.
    await eventually(
      () => zk.getData('/operated/leader/election/instance').then((node) => node?.data.toString()),
      (leader) => leader === bId,
      5000,
      'b to lead',
    );
    await eventually(
      () => status(b).shardingItems,
      (items) => items.length === 4,
      10_000,
      'b to own every item',
    );
    // a's markers are gone, its node stays deleted, and a runs nothing more.
    for (let item = 0; item < 4; item++)
      expect((await zk.getData(`/operated/sharding/${item}/running`))?.data.toString()).not.toBe(aId);
    expect(await zk.exists(`/operated/instances/${aId}`)).toBeUndefined();
    const stoppedAt = Date.now();
    await eventually(
      () => runs.filter((run) => run.ip === '127.0.0.12' && run.start > stoppedAt).length,
      (n) => n >= 4,
      10_000,
      'b to run every item',
    );
    expect(runs.filter((run) => run.ip === '127.0.0.11' && run.start > deletedAt)).toEqual([]);
    expect(warnings.mock.calls.some((call) => String(call[0]).includes('shut down by an operator'))).toBe(true);
  });

  it('the whole instances node deleted at once (zkCli deleteall) is taken as an accident: every instance puts its node back and goes on', async () => {
    const namespace = uniqueNamespace('deleteall');
    runs.length = 0;
    holdMs = 0;
    const warnings = vi.spyOn(Logger.prototype, 'warn');
    const zk = await observer(namespace);
    const a = await bootAt(namespace, '127.0.0.21');
    const b = await bootAt(namespace, '127.0.0.22');
    await eventually(
      () => [status(a).shardingItems.length, status(b).shardingItems.length],
      ([x, y]) => x === 2 && y === 2,
      15_000,
      'both sharing the items',
    );
    const children = (await zk.getChildren('/operated/instances'))!;
    expect(children).toHaveLength(2);
    // As zkCli's deleteall does it (ZKUtil.deleteRecursive): the children and the node in one multi.
    await zk.transaction([
      ...children.map((child) => ({ op: 'remove' as const, path: `/operated/instances/${child}` })),
      { op: 'remove', path: '/operated/instances' },
    ]);
    await eventually(
      () => zk.getChildren('/operated/instances'),
      (ids) => ids?.length === 2,
      10_000,
      'both instance nodes back',
    );
    const healedAt = Date.now();
    await eventually(
      () => new Set(runs.filter((run) => run.start > healedAt).map((run) => run.ip)).size,
      (n) => n === 2,
      10_000,
      'both running again',
    );
    expect(status(a).shutdown).toBeUndefined();
    expect(status(b).shutdown).toBeUndefined();
    expect(warnings.mock.calls.some((call) => String(call[0]).includes('taken as an accident'))).toBe(true);
  });
});
