/**
 * Bench: a workflow's handover (docs/guide/workflows.md): the time from the last item of a parent step to the first
 * item of its child, over many runs, beside the time from a cron firing's instant to its first item in the same
 * processes (the target: the handover within 50 ms of it). Run by bench/run.ts.
 */
import { ElasticJobOperator } from '../../lib/lifecycle/elastic-job-operator.js';
import { LineProcess } from '../../test/support/line-process.js';
import { WorkflowNodePath } from '../../lib/workflow/workflow-paths.js';
import { type Figure, figure, ns, observer, percentile, quick, round, sleep, zk } from '../support/bench-support.js';

export interface WorkflowFigures {
  runs: number;
  processes: number;
  /** The parent's last item's end → the child's first item's start, per run. */
  handoverP50: number;
  handoverP99: number;
  /** A firing's instant → its item's start, over the same period. */
  firingP50: number;
  firingP99: number;
  /**
   * Where the handover goes, p50 of each part: the parent's last item's end → its outcome's node written (ZooKeeper's
   * mtime, the server's clock on this machine, whole ms), then → the child's first item.
   */
  recordP50: number;
  afterRecordP50: number;
  /** The run's trigger (the operator's write) → the parent's first item, per run. */
  triggerToFirstItem: Figure;
}

interface ItemEvent {
  event: 'item';
  job: 'parent' | 'child';
  phase: 'start' | 'end';
  at: number;
}

export async function workflowHandover(processes = 3, items = 2): Promise<WorkflowFigures> {
  const runs = quick ? 20 : 200;
  const namespace = ns('workflow');
  const apps = Array.from(
    { length: processes },
    () =>
      new LineProcess(process.execPath, ['build/bench/fixtures/workflow-app.js'], {
        ...process.env,
        ZK_CONNECT: zk().connectString,
        ZK_NAMESPACE: namespace,
        ITEMS: String(items),
      }),
  );
  const operator = await ElasticJobOperator.connect({ serverLists: zk().connectString, namespace });
  const tree = await observer(namespace);
  const paths = new WorkflowNodePath('chain');
  try {
    await Promise.all(apps.map((app) => app.waitForLine(/"event":"ready"/, 60_000)));
    // Every instance online in both steps' jobs, so that each run's items are spread over the processes.
    for (const job of ['parent', 'child'])
      while ((await operator.getJobBriefInfo(job))?.instanceCount !== processes) await sleep(50);
    const events = (from: number[]): ItemEvent[] =>
      apps.flatMap((app, index) =>
        app.lines
          .slice(from[index])
          .filter((line) => line.includes('"event":"item"'))
          .map((line) => JSON.parse(line.slice(4)) as ItemEvent),
      );
    const handovers: number[] = [];
    const records: number[] = [];
    const afterRecords: number[] = [];
    const triggers: number[] = [];
    const ticksFrom = apps.map((app) => app.lines.length);
    for (let run = 0; run < runs; run++) {
      const from = apps.map((app) => app.lines.length);
      const triggeredAt = Date.now();
      const runId = await operator.triggerWorkflow('chain');
      // Until every child item ended, then until the run is written COMPLETED (the next trigger is refused before).
      while (events(from).filter((e) => e.job === 'child' && e.phase === 'end').length < items) await sleep(5);
      while ((await operator.getWorkflowRuns('chain')).find((r) => r.id === runId)?.state !== 'COMPLETED')
        await sleep(5);
      const seen = events(from);
      const parentEnd = Math.max(...seen.filter((e) => e.job === 'parent' && e.phase === 'end').map((e) => e.at));
      const childStart = Math.min(...seen.filter((e) => e.job === 'child' && e.phase === 'start').map((e) => e.at));
      const parentStart = Math.min(...seen.filter((e) => e.job === 'parent' && e.phase === 'start').map((e) => e.at));
      handovers.push(childStart - parentEnd);
      const recorded = await Promise.all(
        Array.from({ length: items }, (_, item) => tree.getData(paths.item(runId, 'parent', item))),
      );
      const recordedAt = Math.max(...recorded.map((node) => node?.stat.mtime ?? Number.NaN));
      records.push(recordedAt - parentEnd);
      afterRecords.push(childStart - recordedAt);
      triggers.push(parentStart - triggeredAt);
    }
    const ticks = apps.flatMap((app, index) =>
      app.lines
        .slice(ticksFrom[index])
        .filter((line) => line.includes('"event":"tick"'))
        .map((line) => (JSON.parse(line.slice(4)) as { ms: number }).ms),
    );
    return {
      runs,
      processes,
      handoverP50: round(percentile(handovers, 50)),
      handoverP99: round(percentile(handovers, 99)),
      firingP50: round(percentile(ticks, 50)),
      firingP99: round(percentile(ticks, 99)),
      recordP50: round(percentile(records, 50)),
      afterRecordP50: round(percentile(afterRecords, 50)),
      triggerToFirstItem: figure(triggers, 'ms'),
    };
  } finally {
    await operator.close();
    await tree.close();
    await Promise.all(apps.map((app) => app.stop('SIGKILL')));
  }
}
