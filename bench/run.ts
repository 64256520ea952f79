/**
 * Benchmarks, side by side with the anchors, on a throwaway local ZooKeeper (a fresh server of our own, since
 * some figures come from its counters). Prints a table and writes bench/results/latest.json. One file per bench in
 * bench/benches/, what they share in bench/support/bench-support.ts; this file runs them (BENCH_ONLY picks steps by
 * name prefix) and prints the table.
 * Every figure is the median over rounds, with its spread (min..max); comparisons are taken in the same run.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { MAX_SHARDING_TOTAL_COUNT } from '../lib/job/config/job-configuration.validator.js';
import { handover } from './benches/handover.bench.js';
import { lateness } from './benches/lateness.bench.js';
import { requestsPerFiring, requestsPerFiringInCluster } from './benches/requests.bench.js';
import { crashFailover } from './benches/crash-failover.bench.js';
import { operatorReactions } from './benches/operator.bench.js';
import { scale, scaleTenThousand, steadyAtSize, scaleCluster } from './benches/scale.bench.js';
import { manyItems } from './benches/items.bench.js';
import { observabilityCost } from './benches/observability.bench.js';
import { transportWait } from './benches/transport.bench.js';
import { consoleAtSize } from './benches/console.bench.js';
import { bullmqBurst } from './benches/bullmq.bench.js';
import { burstAtInstant } from './benches/burst.bench.js';
import { workflowHandover } from './benches/workflow.bench.js';
import { itemLogsInBurst, LINES_PER_ITEM, policiesSetUnused } from './benches/item-policies.bench.js';
import { type Figure, quick, ROUNDS, round, startZookeeper, stopZookeeper } from './support/bench-support.js';

async function main(): Promise<void> {
  await startZookeeper();
  const results: Record<string, unknown> = {
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
    },
    zookeeper: { version: '3.8 (Debian libzookeeper-java)', tickTimeMs: 200 },
    rounds: ROUNDS,
  };
  const only = process.env.BENCH_ONLY?.split(',');
  const step = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
    if (only && !only.some((prefix) => name.startsWith(prefix))) return (results[name] = undefined) as T;
    process.stderr.write(`[bench] ${name}...\n`);
    try {
      const value = await run();
      results[name] = value;
      return value;
    } catch (error) {
      // One broken measure must not hide the others: it is reported as failed, with why.
      const reason = error instanceof Error ? error.message.split('\n')[0]! : String(error);
      process.stderr.write(`[bench] ${name} failed: ${reason}\n`);
      results[name] = { failed: reason };
      return undefined as T;
    }
  };
  try {
    const oursHandover = await step('handover.nestjs-elastic-job', () => handover('nestjs-elastic-job'));
    const curatorHandover = await step('handover.curator', () => handover('curator'));
    const late = await step('lateness', () => lateness());
    const reqOn = await step('requests.monitorExecution', () => requestsPerFiring(true));
    const reqOff = await step('requests.noMonitorExecution', () => requestsPerFiring(false));
    const reqCluster = await step('requests.cluster3', () => requestsPerFiringInCluster());
    const observed = await step('observability', () => observabilityCost());
    const transport = await step('transport', () => transportWait());
    const consoleFigures = await step('console.1000', () => consoleAtSize(1000));
    const failover = await step('crashFailover', () => crashFailover(4000));
    const operated = await step('operator', () => operatorReactions());
    // 10 jobs: fixed costs (the ZooKeeper connection) dominate any per-job memory figure; start-up only.
    const s10 = await step('scale.10', () => scale(10, false));
    const s100 = await step('scale.100', () => scale(100));
    const s1000 = await step('scale.1000', () => scale(1000));
    const s10k = await step('scale.10000', () => scaleTenThousand(10_000));
    const steady = await step('steady.10000', () => steadyAtSize(10_000, 1000, quick ? 1 : 2));
    // Issue 32's burst: a thousand jobs of two items, monitorExecution on, all at one instant every 10 s, against one
    // job alone; then BullMQ on the same burst.
    const burst = await step('burst.1000', () => burstAtInstant(1000));
    // The same kind of burst on BullMQ (a Redis of its own), to put beside ours.
    const bull = await step('bullmq.2000', () => bullmqBurst(2000));
    // Issue 43: the same inside a Nest application context (@nestjs/bullmq), as a Nest team's worker runs it.
    const bullNest = await step('bullmq.nest.2000', () => bullmqBurst(2000, { nest: true }));
    const cluster2 = await step('scale.2x100', () => scaleCluster(2, 100));
    const cluster4 = await step('scale.4x100', () => scaleCluster(4, 100));
    const cluster = await step('scale.8x100', () => scaleCluster(8, 100));
    // The floor of the row above: the same 8 processes with one job each (Node, Nest and a session, on 2 cores).
    const clusterFloor = await step('scale.8x1', () => scaleCluster(8, 1));
    const items1k = await step('items.1000', () => manyItems(1000));
    const items10k = await step(`items.${MAX_SHARDING_TOTAL_COUNT}`, () => manyItems(MAX_SHARDING_TOTAL_COUNT));
    const workflow = await step('workflow.handover', () => workflowHandover());
    // Issue 41: the item policies set but unused, and item logs in the burst, each beside none in the same run.
    const policies = await step('policies.unused', () => policiesSetUnused());
    const itemLogs = await step('itemLogs.burst', () => itemLogsInBurst());
    const f = (x: Figure | undefined): string => (x ? `${x.median} ${x.unit} (${x.min}..${x.max})` : 'skipped');
    const rows: Array<[string, string, string, string]> = [
      [
        'graceful leader handover',
        f(oursHandover),
        `Curator/ElasticJob: ${f(curatorHandover)}; ratio ${oursHandover && curatorHandover ? round(oursHandover.median / curatorHandover.median) : '-'}×`,
        'ours ≤ 0.25× Curator',
      ],
      [
        'firing lateness p99',
        f(late?.ours),
        `@nestjs/schedule: ${f(late?.schedule)}; diff ${late ? round(late.ours.median - late.schedule.median) : '-'} ms`,
        'within 2 ms of @nestjs/schedule',
      ],
      ['firing lateness p50', f(late?.oursP50), `@nestjs/schedule: ${f(late?.scheduleP50)}`, ''],
      [
        'requests/firing, monitorExecution',
        `client reads ${f(reqOn?.client.reads)}, writes ${f(reqOn?.client.writes)}`,
        `server: ${f(reqOn?.server)}`,
        '≤ 2, no reads',
      ],
      [
        'requests/firing, 3-instance cluster',
        `per instance: client reads ${f(reqCluster?.reads)}, writes ${f(reqCluster?.writes)}`,
        "monitorExecution, one item each; peers' markers included",
        '≤ 2, no reads',
      ],
      [
        'requests/firing, no monitorExecution',
        `client reads ${f(reqOff?.client.reads)}, writes ${f(reqOff?.client.writes)}`,
        `server: ${f(reqOff?.server)}`,
        '0',
      ],
      [
        'with events, listener, metrics, tracing',
        `lateness p99 ${f(observed?.observed.latenessP99)}; reads ${f(observed?.observed.reads)}, writes ${f(observed?.observed.writes)}`,
        `plain: lateness p99 ${f(observed?.plain.latenessP99)}, reads ${f(observed?.plain.reads)}, writes ${f(observed?.plain.writes)}`,
        'unchanged',
      ],
      [
        '… with the tracing database down',
        `lateness p99 ${f(observed?.databaseDown.latenessP99)}; reads ${f(observed?.databaseDown.reads)}, writes ${f(observed?.databaseDown.writes)}`,
        'connection refused on every flush (backoff)',
        'unchanged',
      ],
      [
        'transport job item: wait in NATS',
        transport ? `p50 ${transport.waitP50} ms, p99 ${transport.waitP99} ms` : 'skipped',
        transport
          ? `round trip to the reply: p50 ${transport.roundTripP50} ms, p99 ${transport.roundTripP99} ms; ${transport.items} items, worker in another process`
          : '',
        '',
      ],
      [
        'console, 1000 jobs: a page of 50',
        consoleFigures ? `cold ${consoleFigures.coldMs} ms; warm ${f(consoleFigures.warm)}` : 'skipped',
        consoleFigures
          ? `filtered ${f(consoleFigures.filtered)}; after a change ${f(consoleFigures.afterChange)}; a job ${f(consoleFigures.detail)}; ` +
            `executions from the instances ${f(consoleFigures.executions)}; failures ${f(consoleFigures.failures)}`
          : '',
        'fast with 1000 jobs',
      ],
      ['crash failover (SIGKILL → re-run)', f(failover), 'session timeout 4000 ms', '≤ session timeout + 500 ms'],
      ['operator trigger → items started', f(operated?.triggerMs), '3 instances, separate processes', ''],
      [
        'operator disable → firing without that server',
        f(operated?.disableMs),
        `its last item ended ${f(operated?.disableLastItemEndMs)} after the write (300 ms items run out)`,
        '≤ 1 firing period + resharding',
      ],
      ['operator shutdown → job stopped there', f(operated?.shutdownMs), 'instances/{id} deleted', ''],
      ...(
        [
          ['10', s10],
          ['100', s100],
          ['1000', s1000],
        ] as const
      ).flatMap(([n, s]): Array<[string, string, string, string]> => [
        [
          `${n} jobs: bootstrap`,
          f(s?.bootstrapMs),
          `${s?.znodesPerJob} znodes, ${s?.watchesPerJob} watches per job`,
          n === '1000' ? '< 5 s' : '',
        ],
        [
          `${n} jobs: RSS/job between firings`,
          s && !s.rssIdlePerJobKb ? 'not measured: fixed costs dominate' : f(s?.rssIdlePerJobKb),
          `${s?.rssFiringPerJobKb ? `firing every second: ${f(s.rssFiringPerJobKb)}; ` : ''}at start-up: ${f(s?.rssStartPerJobKb)}; heap after GC ${f(s?.heapPerJobKb)}`,
          n === '1000' ? '< 50 KB/job (start-up, between firings); < 100 KB firing every second' : '',
        ],
      ]),
      [
        '10,000 jobs: registered, all sharded',
        s10k ? `${s10k.registeredMs} ms, ${s10k.shardedMs} ms` : 'skipped',
        s10k
          ? `${s10k.znodesPerJob} znodes, ${s10k.watchesPerJob} watches per job; 10-second cron; every request checked against the 1 MB limit before it is sent`
          : '',
        'sharded < 15 s',
      ],
      [
        '10,000 jobs: RSS/job',
        s10k ? `at start-up ${s10k.rssStartPerJobKb} KB; over a cron period ${s10k.rssPeriodPerJobKb} KB` : 'skipped',
        s10k ? `heap after GC at start-up ${s10k.heapPerJobKb} KB` : '',
        '< 50 KB at start-up, < 40 KB between firings',
      ],
      [
        '10,000 jobs: SIGTERM → exit',
        s10k ? `${s10k.shutdownMs} ms` : 'skipped',
        s10k ? `instance nodes left ${s10k.instancesLeft}, leader nodes left ${s10k.leadersLeft}` : '',
        '< 10 s, none left',
      ],
      [
        '10,000 jobs, 1000 firing a minute: lateness',
        steady ? `p99 ${steady.p99} ms, p50 ${steady.p50} ms (${steady.samples} starts)` : 'skipped',
        steady
          ? `1 job alone, same run: p99 ${steady.oneJobP99} ms; event loop delay p99 ${steady.eldP99} ms, max ${steady.eldMax} ms`
          : '',
        'p99 within 5 ms of 1 job; event-loop p99 < 20 ms',
      ],
      [
        'burst: 1000 jobs × 2 items every 10 s, one process: item starts late by',
        burst
          ? `p99 ${burst.p99} ms, p50 ${burst.p50} ms, max ${burst.max} ms (${burst.samples} starts, ${burst.bursts} bursts)`
          : 'skipped',
        burst
          ? `first burst after start-up: p99 ${burst.startupP99} ms, the next: p99 ${burst.firstP99} ms; 1 job alone, same run: p99 ${burst.oneJobP99} ms; ` +
            `ready ${burst.readyMs} ms after start; RSS ${burst.rssMb} MB; heap allocated ${kb(burst.allocatedPerStartBytes)} an item start; ` +
            `event loop delay p99 ${burst.eldP99} ms, max ${burst.eldMax} ms`
          : '',
        'p99 < 100 ms, within 100 ms of 1 job; ahead of BullMQ',
      ],
      [
        'BullMQ: 2000 schedulers every 10 s, 1 worker × 100',
        bull
          ? `p99 ${bull.p99} ms, p50 ${bull.p50} ms (${bull.samples} starts, ${bull.missing} never came)`
          : 'skipped',
        bull
          ? `ready ${bull.readyMs} ms after start; RSS ${bull.rssMb} MB; local Redis, process of its own`
          : String((results['bullmq.2000'] as { failed?: string } | undefined)?.failed ?? ''),
        '',
      ],
      [
        'growth, 100 → 1000 jobs (10×)',
        s100 && s1000
          ? `bootstrap ×${round(s1000.bootstrapMs.median / s100.bootstrapMs.median)}, RSS between firings ×${s1000.rssIdlePerJobKb && s100.rssIdlePerJobKb ? round((s1000.rssIdlePerJobKb.median * 1000) / (s100.rssIdlePerJobKb.median * 100)) : '-'}`
          : 'skipped',
        s100 && s1000
          ? `znodes ×${round((s1000.znodesPerJob * 1000) / (s100.znodesPerJob * 100))}, watches ×${round((s1000.watchesPerJob * 1000) / (s100.watchesPerJob * 100))}`
          : '',
        'linear: ≤ 10×',
      ],
      ...(
        [
          ['2', cluster2],
          ['4', cluster4],
          ['8', cluster],
        ] as const
      ).map(([p, c]): [string, string, string, string] => [
        `${p} processes × 100 jobs: all sharded`,
        f(c?.allShardedMs),
        c
          ? `CPU per process until sharded ${f(c.cpuMsPerProcess)}`
          : String((results[`scale.${p}x100`] as { failed?: string } | undefined)?.failed ?? ''),
        p === '8' ? '< 6 s; CPU 2 → 8 processes ≤ 1.3×' : '',
      ]),
      [
        '8 processes × 1 job: all sharded (the floor of the row above)',
        f(clusterFloor?.allShardedMs),
        clusterFloor ? `CPU per process until sharded ${f(clusterFloor.cpuMsPerProcess)}` : '',
        '',
      ],
      ...(
        [
          ['1000', items1k],
          [String(MAX_SHARDING_TOTAL_COUNT), items10k],
        ] as const
      ).map(([n, x]): [string, string, string, string] => [
        `one job of ${n} items: firing`,
        x ? `first item ${f(x.firstStartMs)}, last ${f(x.lastEndMs)} after the instant` : 'skipped',
        x ? `sharded ${f(x.shardedMs)} after start; RSS ${f(x.rssMb)}` : '',
        n === String(MAX_SHARDING_TOTAL_COUNT) ? 'the maximum: works' : '',
      ]),
      [
        "workflow: a parent's last item → its child's first item",
        workflow ? `p50 ${workflow.handoverP50} ms, p99 ${workflow.handoverP99} ms (${workflow.runs} runs)` : 'skipped',
        workflow
          ? `a firing's instant → its item, same processes: p50 ${workflow.firingP50} ms, p99 ${workflow.firingP99} ms; ` +
            `p50 split: outcome recorded ${workflow.recordP50} ms, then child's item ${workflow.afterRecordP50} ms; ` +
            `trigger → first item ${f(workflow.triggerToFirstItem)}; ${workflow.processes} processes, 2 items a step`
          : '',
        "within 50 ms of a firing's instant → its item",
      ],
      [
        '100 jobs × 1 item every second, item policies set but unused: lateness',
        policies ? `p99 ${f(policies.policies.latenessP99)}, p50 ${f(policies.policies.latenessP50)}` : 'skipped',
        policies
          ? `none, same run: p99 ${f(policies.none.latenessP99)}, p50 ${f(policies.none.latenessP50)}; ` +
            `writes/firing ${f(policies.policies.writes)} vs ${f(policies.none.writes)}, ` +
            `reads ${f(policies.policies.reads)} vs ${f(policies.none.reads)}`
          : '',
        'as without them',
      ],
      [
        `burst: 1000 jobs × 2 items every 10 s, ${LINES_PER_ITEM} log lines per item: item starts late by`,
        itemLogs
          ? `p99 ${f(itemLogs.logs.p99)}, p50 ${f(itemLogs.logs.p50)} (${itemLogs.logs.samples} starts)`
          : 'skipped',
        itemLogs
          ? `no lines, same run: p99 ${f(itemLogs.none.p99)}, p50 ${f(itemLogs.none.p50)} (${itemLogs.none.samples} starts); ` +
            `p99 ratio ${round(itemLogs.logs.p99.median / Math.max(1, itemLogs.none.p99.median))}×`
          : '',
        'p99 within 10% of no lines',
      ],
      [
        `burst as above, the same ${LINES_PER_ITEM} lines handed to a logger that does nothing: item starts late by`,
        itemLogs
          ? `p99 ${f(itemLogs.noop.p99)}, p50 ${f(itemLogs.noop.p50)} (${itemLogs.noop.samples} starts)`
          : 'skipped',
        itemLogs
          ? `context.logger over it, same run: p99 ratio ` +
            `${round(itemLogs.logs.p99.median / Math.max(1, itemLogs.noop.p99.median))}×`
          : '',
        "the handlers' own strings: context.logger's row against this one is the library's cost",
      ],
      [
        `burst as above, the same ${LINES_PER_ITEM} lines through a plain Nest Logger (not kept): item starts late by`,
        itemLogs
          ? `p99 ${f(itemLogs.plain.p99)}, p50 ${f(itemLogs.plain.p50)} (${itemLogs.plain.samples} starts)`
          : 'skipped',
        itemLogs
          ? `context.logger (kept) over plain, same run: p99 ratio ` +
            `${round(itemLogs.logs.p99.median / Math.max(1, itemLogs.plain.p99.median))}×`
          : '',
        "the keep's own cost: context.logger's row against this one",
      ],
    ];
    const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length), 8));
    const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
    process.stdout.write(
      `\n${line(['measure', 'nestjs-elastic-job', 'anchor / detail', 'target'])}\n${line(widths.map((w) => '-'.repeat(w)))}\n${rows.map(line).join('\n')}\n`,
    );
    process.stdout.write(burstSideBySide(burst, bullNest, bull));
    process.stdout.write(`\nmachine: ${JSON.stringify(results.machine)}\n`);
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/latest.json', `${JSON.stringify(results, null, 2)}\n`);
    process.stdout.write('figures written to bench/results/latest.json\n');
  } finally {
    await stopZookeeper();
  }
}

/** Bytes as KB with one decimal. */
function kb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

/** Issue 43's table: each row of the burst, ours beside BullMQ in Nest and BullMQ alone, from this run. */
function burstSideBySide(
  ours: Awaited<ReturnType<typeof burstAtInstant>> | undefined,
  nest: Awaited<ReturnType<typeof bullmqBurst>> | undefined,
  bare: Awaited<ReturnType<typeof bullmqBurst>> | undefined,
): string {
  if (!ours && !nest && !bare) return '';
  const ms = (value: number | undefined): string => (value === undefined ? '-' : `${value} ms`);
  const rows: string[][] = [
    ['', 'nestjs-elastic-job', 'BullMQ in Nest', 'BullMQ alone'],
    [
      'first firing after start-up, item-start lateness p99',
      ms(ours?.startupP99),
      ms(nest?.firstP99),
      ms(bare?.firstP99),
    ],
    ['steady firings, p99', ms(ours?.p99), ms(nest?.p99), ms(bare?.p99)],
    [
      '  steady starts that never came',
      ours ? String(Math.max(0, ours.bursts * 2000 - ours.samples)) : '-',
      String(nest?.missing ?? '-'),
      String(bare?.missing ?? '-'),
    ],
    ['start to ready', ms(ours?.readyMs), ms(nest?.readyMs), ms(bare?.readyMs)],
    [
      'RSS after the bursts',
      ...[ours?.rssMb, nest?.rssMb, bare?.rssMb].map((mb) => (mb === undefined ? '-' : `${mb} MB`)),
    ],
    [
      '  the same, right after a full collection',
      ...[ours?.rssAfterGcMb, nest?.rssAfterGcMb, bare?.rssAfterGcMb].map((mb) =>
        mb === undefined ? '-' : `${mb} MB`,
      ),
    ],
    // The JavaScript heap a steady burst allocates per item start (issue 43: under 8 KB), ours only.
    ['heap allocated per item start', ours ? kb(ours.allocatedPerStartBytes) : '-', '-', '-'],
  ];
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length), 3));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  const [head, ...body] = rows;
  return (
    `\nburst, 1000 jobs × 2 items against 2000 BullMQ schedulers (1 worker × 100), same run:\n` +
    `${line(head!)}\n${line(widths.map((w) => '-'.repeat(w)))}\n${body.map(line).join('\n')}\n`
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
