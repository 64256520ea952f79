import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { NamespaceWatch, type NamespaceChange } from '../../lib/lifecycle/namespace-watch.js';
import { workflowLayers } from '../../lib/console/model/workflow-model.js';
import { FakeZookeeper } from '../support/fake-registry.js';

/**
 * The namespace watch's workflows (the console's live workflow view): told by name only when asked, only for the
 * runs' own nodes (a step's state lives there), never for the items' records below them, and never as a job.
 */

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const EMPTY = Buffer.alloc(0);

async function watched(workflows: boolean) {
  const zk = new FakeZookeeper();
  const registry = await zk.connect('ns');
  const changes: NamespaceChange[] = [];
  const watch = await NamespaceWatch.start(
    registry,
    (change) => changes.push(change),
    () => undefined,
    {
      workflows,
    },
  );
  /** Lets the watch's events arrive and its 200 ms gathering end. */
  const settle = async () => {
    await registry.delivered();
    await vi.advanceTimersByTimeAsync(250);
  };
  return { registry, changes, watch, settle };
}

describe('the namespace watch and the workflows', () => {
  it("tells a workflow's run nodes by the workflow's name, not its items' records", async () => {
    const { registry, changes, watch, settle } = await watched(true);
    await registry.createWithParents('/.workflows/nightly/runs/r1/extract', EMPTY, 'PERSISTENT');
    await settle();
    expect(changes).toEqual([{ kind: 'workflows', workflows: ['nightly'] }]);
    changes.length = 0;
    // An item's outcome: no change told (the coordinator's move of the run will be).
    await registry.create('/.workflows/nightly/runs/r1/extract/0', Buffer.from('{}'));
    await settle();
    expect(changes).toEqual([]);
    await registry.setData('/.workflows/nightly/runs/r1', Buffer.from('{}'));
    await registry.createWithParents('/report/config', EMPTY, 'PERSISTENT');
    await settle();
    expect(changes).toEqual([
      { kind: 'jobs', jobNames: ['report'] },
      { kind: 'workflows', workflows: ['nightly'] },
    ]);
    watch.close();
  });

  it("tells a workflow named as a job's history node (`executions`)", async () => {
    const { registry, changes, watch, settle } = await watched(true);
    await registry.createWithParents('/.workflows/executions/runs/r1', EMPTY, 'PERSISTENT');
    await settle();
    expect(changes).toEqual([{ kind: 'workflows', workflows: ['executions'] }]);
    watch.close();
  });

  it('tells nothing of the workflows unless asked (the operator watch’s default)', async () => {
    const { registry, changes, watch, settle } = await watched(false);
    await registry.createWithParents('/.workflows/nightly/runs/r1', EMPTY, 'PERSISTENT');
    await settle();
    expect(changes).toEqual([]);
    watch.close();
  });
});

describe("a workflow's layers (the console's DAG columns)", () => {
  it('places each step one column right of its deepest parent', () => {
    expect(workflowLayers({ a: [], b: ['a'], c: ['a'], d: ['b', 'c'] })).toEqual([['a'], ['b', 'c'], ['d']]);
    expect(workflowLayers({ load: ['extract', 'transform'], transform: ['extract'], extract: [] })).toEqual([
      ['extract'],
      ['transform'],
      ['load'],
    ]);
    // A hand-written definition: a parent that is no step counts as none, a cycle does not hang.
    expect(workflowLayers({ a: ['ghost'], b: ['c'], c: ['b'] })).toEqual([['a'], ['c'], ['b']]);
  });
});
