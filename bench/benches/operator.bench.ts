/** Bench: how fast a cluster reacts to the operator's trigger, disable and shutdown. Run by bench/run.ts. */
import { ClusterInstance, type RunEvent, type StartEvent } from '../../test/support/cluster.js';
import { ElasticJobOperator } from '../../lib/lifecycle/elastic-job-operator.js';
import { type Figure, figure, sleep, ns, ROUNDS, zk } from '../support/bench-support.js';

export interface OperatorFigures {
  /** trigger() → the last instance's items started (a job whose cron never fires on its own). */
  triggerMs: Figure;
  /** disable(job, ip) → the first firing with all six items on the other servers (one every second). */
  disableMs: Figure;
  /** disable(job, ip) → that server's last item ended (items take 300 ms; a running one is not stopped). */
  disableLastItemEndMs: Figure;
  /** shutdown(job, ip) → that instance logs the job stopped. */
  shutdownMs: Figure;
}

/** How long running instances (separate processes, one per server IP) take to act on an operator's write. */
export async function operatorReactions(): Promise<OperatorFigures> {
  const trigger: number[] = [];
  const disable: number[] = [];
  const lastItemEnd: number[] = [];
  const shutdown: number[] = [];
  const ips = ['10.9.0.1', '10.9.0.2', '10.9.0.3'];
  for (let r = 0; r < Math.min(ROUNDS, 3); r++) {
    const namespace = ns('operator');
    const start = (jobName: string, cron: string): ClusterInstance[] =>
      ips.map(
        (ip) =>
          new ClusterInstance({ zkConnect: zk().connectString, namespace, jobName, cron, total: 6, workMs: 300, ip }),
      );
    const onDemand = start('on-demand', '0 0 0 1 1 *');
    const steady = start('steady', '* * * * * *');
    const all = [...onDemand, ...steady];
    const operator = await ElasticJobOperator.connect({ serverLists: zk().connectString, namespace });
    try {
      await Promise.all(all.map((i) => i.waitForLine(/^READY$/, 60_000)));
      // Sharded over the three, so a trigger reaches every instance with items.
      await untilTrue(async () => (await operator.getShardingInfo('steady')).every((item) => item.instanceId), 30_000);
      await untilTrue(async () => (await operator.getJobBriefInfo('on-demand'))?.instanceCount === 3, 30_000);

      let writtenAt = Date.now();
      await operator.trigger('on-demand');
      const starts = await Promise.all(
        onDemand.map((i) => i.waitForLine((l) => l.includes('"event":"start"'), 20_000)),
      );
      trigger.push(Math.max(...starts.map((l) => (JSON.parse(l.slice(4)) as StartEvent).start)) - writtenAt);

      const [disabledIp, , shutIp] = ips as [string, string, string];
      const disabled = steady[0]!;
      writtenAt = Date.now();
      await operator.disable({ jobName: 'steady', serverIp: disabledIp });
      const others = steady.filter((i) => i !== disabled);
      let firstFullFiring: number | undefined;
      await untilTrue(async () => {
        const bySecond = new Map<number, Set<number>>();
        for (const run of others.flatMap((i) => i.starts()).filter((s) => s.start > writtenAt))
          bySecond.set(
            Math.floor(run.start / 1000),
            (bySecond.get(Math.floor(run.start / 1000)) ?? new Set()).add(run.item),
          );
        const second = [...bySecond].sort(([a], [b]) => a - b).find(([, items]) => items.size === 6)?.[0];
        if (second === undefined) return false;
        firstFullFiring = Math.min(
          ...others
            .flatMap((i) => i.starts())
            .filter((s) => Math.floor(s.start / 1000) === second)
            .map((s) => s.start),
        );
        return true;
      }, 20_000);
      disable.push(firstFullFiring! - writtenAt);
      const ended = disabled.runs().filter((run: RunEvent) => run.end > writtenAt);
      lastItemEnd.push(Math.max(writtenAt, ...ended.map((run) => run.end)) - writtenAt);

      const shut = steady[2]!;
      writtenAt = Date.now();
      await operator.shutdown({ jobName: 'steady', serverIp: shutIp });
      await shut.waitForLine(/shut down by an operator/, 20_000);
      shutdown.push(Date.now() - writtenAt);
    } finally {
      await operator.close();
      for (const i of all) i.kill('SIGKILL');
    }
  }
  return {
    triggerMs: figure(trigger, 'ms'),
    disableMs: figure(disable, 'ms'),
    disableLastItemEndMs: figure(lastItemEnd, 'ms'),
    shutdownMs: figure(shutdown, 'ms'),
  };
}

/** Polls `check` every 50 ms until it holds; throws after `timeoutMs`. */
async function untilTrue(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up after ${timeoutMs} ms`);
    await sleep(50);
  }
}
