/** Bench: the web console over 1000 jobs. Run by bench/run.ts. */
import { ElasticJobOperator } from '../../lib/lifecycle/elastic-job-operator.js';
import type { AddressInfo } from 'node:net';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ElasticJobModule, ElasticJobRegistry } from '../../lib/index.js';
import { ElasticJobConsoleModule } from '../../lib/console/index.js';
import { type Figure, figure, round, sleep, ns, ROUNDS, zk } from '../support/bench-support.js';

/**
 * The web console over a namespace of `jobs` jobs (one app holding them all, the console in it): a jobs page read
 * cold (every job read once), warm (nothing changed: no read), filtered, after one job changed (the watch names it:
 * one job read again), a job's detail, and the executions and failures lists without a database (the instances' logs
 * asked through ZooKeeper). Each warm figure is the median of ROUNDS requests.
 */
export async function consoleAtSize(jobs: number): Promise<{
  coldMs: number;
  warm: Figure;
  filtered: Figure;
  afterChange: Figure;
  detail: Figure;
  /** The executions list and the failures list with no database: every instance asked through ZooKeeper. */
  executions: Figure;
  failures: Figure;
}> {
  @Module({
    imports: [
      ElasticJobModule.forRoot({ zookeeper: { serverLists: zk().connectString, namespace: ns('console') } }),
      ElasticJobConsoleModule.forRoot({ actions: true }),
    ],
  })
  class ConsoleBenchApp {}
  const app = await NestFactory.create(ConsoleBenchApp, { logger: ['error'] });
  try {
    await app.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/elastic-job/api`;
    const registry = app.get(ElasticJobRegistry);
    for (let i = 0; i < jobs; i++)
      await registry.addJob(
        { jobName: `job-${String(i).padStart(5, '0')}`, cron: '0 0 3 * * *', shardingTotalCount: 2 },
        () => undefined,
      );
    const timed = async (path: string): Promise<number> => {
      const start = performance.now();
      const response = await fetch(`${url}/${path}`);
      if (!response.ok) throw new Error(`${path}: ${response.status}`);
      await response.json();
      return round(performance.now() - start);
    };
    const coldMs = await timed('jobs?limit=50');
    const warm: number[] = [];
    const filtered: number[] = [];
    const afterChange: number[] = [];
    const detail: number[] = [];
    const executions: number[] = [];
    const failures: number[] = [];
    const operator = app.get(ElasticJobOperator);
    for (let round_ = 0; round_ < ROUNDS; round_++) {
      warm.push(await timed('jobs?limit=50'));
      filtered.push(await timed('jobs?name=00042'));
      detail.push(await timed(`jobs/job-${String(round_).padStart(5, '0')}`));
      executions.push(await timed('executions?limit=50'));
      failures.push(await timed('failures'));
      await operator.disable({ jobName: `job-${String(round_).padStart(5, '0')}` });
      await sleep(400); // the watch gathers changes for 200 ms
      afterChange.push(await timed('jobs?status=DISABLED'));
    }
    return {
      coldMs,
      warm: figure(warm, 'ms'),
      filtered: figure(filtered, 'ms'),
      afterChange: figure(afterChange, 'ms'),
      detail: figure(detail, 'ms'),
      executions: figure(executions, 'ms'),
      failures: figure(failures, 'ms'),
    };
  } finally {
    await app.close();
  }
}
