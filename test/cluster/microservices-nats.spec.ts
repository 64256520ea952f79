import { Logger, Module } from '@nestjs/common';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ElasticJobModule, ElasticJobRegistry, type ItemCompletedEvent } from '../../lib/index.js';
import { elasticJobMessagesController, transportEvents, transportJob } from '../../lib/microservices/index.js';
import { appOptions } from '../support/app.js';
import { CHILD_NODE_FLAGS, LineProcess } from '../support/line-process.js';
import { LocalNats } from '../support/local-nats.js';
import { hold, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace } from '../support/zk.js';

/**
 * A scheduler app and two worker services (separate processes, build/test/fixtures/worker-app.js) on a real NATS
 * server (Debian's nats-server, started here): a worker inspects and triggers the job through patterns, the items
 * of a transport job are served by both workers (a NATS queue group), the item events reach them, and the broker
 * stopping and coming back mid-run fails the items of that firing (reported) and loses nothing after.
 */

afterEach(async () => {
  await releaseAll();
});

const ITEMS = 20;

interface WorkerEvent {
  pid: number;
  event: string;
  item?: number;
  success?: boolean;
  command?: string;
  answer?: unknown;
}

function eventsOf(worker: LineProcess): WorkerEvent[] {
  return worker.lines.filter((line) => line.startsWith('EVT ')).map((line) => JSON.parse(line.slice(4)) as WorkerEvent);
}

describe('microservices over NATS', () => {
  it('patterns, events and a transport job served by two worker processes; a broker restart loses no item after it', async () => {
    const nats = await LocalNats.create();
    hold(() => nats.stop());
    const workers = [0, 1].map(
      () =>
        new LineProcess(process.execPath, [...CHILD_NODE_FLAGS, 'build/test/fixtures/worker-app.js'], {
          ...process.env,
          NATS_URL: nats.url,
        }),
    );
    hold(() => workers.forEach((worker) => worker.kill('SIGKILL')));
    await Promise.all(workers.map((worker) => worker.waitForLine(/^READY$/, 30_000)));

    const servers = [nats.url];
    @Module({
      imports: [
        ElasticJobModule.forRoot(appOptions(uniqueNamespace('nats'))),
        ClientsModule.register([
          { name: 'WORKERS', transport: Transport.NATS, options: { servers } },
          { name: 'EVENTS', transport: Transport.NATS, options: { servers } },
        ]),
      ],
      controllers: [elasticJobMessagesController()],
      providers: [
        transportJob({
          jobName: 'nats-report',
          cron: '0 0 0 1 1 *',
          shardingTotalCount: ITEMS,
          failover: true,
          client: 'WORKERS',
          pattern: 'report.build',
          timeoutMilliseconds: 3000,
        }),
        transportEvents({ client: 'EVENTS', types: ['item.completed'] }),
      ],
    })
    class SchedulerModule {}
    const moduleRef = await Test.createTestingModule({ imports: [SchedulerModule] }).compile();
    const scheduler = moduleRef.createNestMicroservice({
      transport: Transport.NATS,
      options: { servers, queue: 'elastic-job' },
    });
    await scheduler.listen();
    hold(() => scheduler.close());
    const registry = scheduler.get(ElasticJobRegistry);
    const completions: ItemCompletedEvent[] = [];
    const subscription = registry.events$.subscribe((event) => {
      if (event.type === 'item.completed') completions.push(event);
    });
    hold(() => subscription.unsubscribe());

    // A worker inspects the jobs and triggers one, through patterns.
    workers[0]!.send('jobs');
    const jobs = await eventually(
      () => eventsOf(workers[0]!).find((event) => event.event === 'answer' && event.command === 'jobs'),
      (answer) => answer !== undefined,
      10_000,
      'the jobs pattern answered',
    );
    expect(jobs!.answer).toEqual([expect.objectContaining({ jobName: 'nats-report' })]);
    workers[0]!.send('trigger nats-report');
    await eventually(
      () => completions.length,
      (n) => n === ITEMS,
      20_000,
      'every item answered',
    );
    expect(completions.every((event) => event.success)).toBe(true);
    // Both workers served items (the queue group spreads them), each item once.
    const served = workers.map((worker) => eventsOf(worker).filter((event) => event.event === 'served'));
    expect(served.every((list) => list.length > 0)).toBe(true);
    expect(
      served
        .flat()
        .map((event) => event.item)
        .sort((a, b) => a! - b!),
    ).toEqual([...Array(ITEMS).keys()]);
    // And the item events reached the workers, each once.
    await eventually(
      () => workers.flatMap((worker) => eventsOf(worker).filter((event) => event.event === 'heard')).length,
      (n) => n === ITEMS,
      10_000,
      'the item events at the workers',
    );

    // The broker goes away: a firing meanwhile fails its items, each failure reported as an event, and the outage
    // logged once (not a stack per item: issue 27).
    const errors = vi.spyOn(Logger.prototype, 'error');
    const warnings = vi.spyOn(Logger.prototype, 'warn');
    const logs = vi.spyOn(Logger.prototype, 'log');
    hold(() => [errors, warnings, logs].forEach((spy) => spy.mockRestore()));
    const said = (spy: typeof errors, pattern: RegExp): string[] =>
      spy.mock.calls.map((call) => String(call[0])).filter((line) => pattern.test(line));
    await nats.stop();
    completions.length = 0;
    await registry.trigger('nats-report');
    await eventually(
      () => completions.length,
      (n) => n === ITEMS,
      20_000,
      'the items of the firing without broker',
    );
    expect(completions.filter((event) => !event.success)).toHaveLength(ITEMS);
    expect(completions[0]!.failureCause).toBeDefined();
    expect(said(errors, /nats-report/)).toEqual([]);
    expect(said(warnings, /client 'WORKERS'/)).toEqual([
      expect.stringMatching(
        /^'report.build' through client 'WORKERS' is unavailable: connection lost; its items fail until it answers/,
      ),
    ]);

    // It comes back: the next firing's items are all served again, and the waiting events arrive.
    await nats.start();
    completions.length = 0;
    await eventually(
      async () => {
        if (completions.length === 0 || completions.some((event) => !event.success)) {
          completions.length = 0;
          await registry.trigger('nats-report');
          await new Promise((resolve) => setTimeout(resolve, 1500));
        }
        return completions;
      },
      (found) => found.length === ITEMS && found.every((event) => event.success),
      60_000,
      'a firing served in full after the broker came back',
    );
    expect(said(logs, /client 'WORKERS'/)).toEqual([
      expect.stringMatching(
        /^'report.build' through client 'WORKERS' is available again after [\d.]+ s: \d+ item\(s\) failed while it was away$/,
      ),
    ]);
    expect(said(errors, /nats-report/)).toEqual([]);
    await eventually(
      () => workers.flatMap((worker) => eventsOf(worker).filter((event) => event.event === 'heard')).length,
      (n) => n >= 2 * ITEMS,
      30_000,
      'the events of the firing without broker, delivered after it',
    );
  });
});
