import { Controller, Injectable, Module, type INestMicroservice } from '@nestjs/common';
import {
  ClientProxyFactory,
  ClientsModule,
  EventPattern,
  MessagePattern,
  RpcException,
  Payload,
  Transport,
  type ClientProxy,
} from '@nestjs/microservices';
import { NestFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { findFreePort } from '../../lib/devtools/local-zookeeper.js';
import {
  ElasticJobModule,
  ElasticJobRegistry,
  ShardedJob,
  type ItemCompletedEvent,
  type ShardingContext,
  type Wire,
} from '../../lib/index.js';
import {
  ElasticJobTransportEvents,
  elasticJobMessagesController,
  transportEvents,
  transportJob,
  type ElasticJobRpcError,
  type TransportItem,
} from '../../lib/microservices/index.js';
import { appOptions } from '../support/app.js';
import { hold, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace } from '../support/zk.js';

/**
 * The jobs reached through Nest microservice transports (docs/guide/microservices.md), over real TCP sockets between
 * two Nest applications: the scheduler answers the operator patterns and emits its events through a ClientProxy; the
 * other service sends the patterns and receives the events with @EventPattern.
 */

afterEach(async () => {
  await releaseAll();
});

const ran: number[] = [];

@Injectable()
class RemoteJob {
  @ShardedJob({ jobName: 'remote', cron: '0 0 0 1 1 *', shardingTotalCount: 3 })
  run(context: ShardingContext): void {
    ran.push(context.shardingItem);
  }
}

const received: Array<{ type: string; shardingItem?: number; jobName: string; success?: boolean }> = [];

@Controller()
class EventsListener {
  @EventPattern('elastic-job.item.completed')
  onCompleted(@Payload() event: Wire<ItemCompletedEvent>): void {
    received.push(event);
  }
}

@Module({ controllers: [EventsListener] })
class OtherServiceModule {}

async function startOtherService(port: number): Promise<INestMicroservice> {
  const service = await NestFactory.createMicroservice(OtherServiceModule, {
    transport: Transport.TCP,
    options: { host: '127.0.0.1', port },
    logger: ['error'],
  });
  await service.listen();
  return service;
}

async function startScheduler(namespace: string, schedulerPort: number, otherPort: number) {
  @Module({
    imports: [
      ElasticJobModule.forRoot(appOptions(namespace)),
      ClientsModule.register([
        { name: 'EVENTS', transport: Transport.TCP, options: { host: '127.0.0.1', port: otherPort } },
      ]),
    ],
    controllers: [elasticJobMessagesController()],
    providers: [RemoteJob, transportEvents({ client: 'EVENTS', types: ['item.completed'] })],
  })
  class SchedulerModule {}
  const moduleRef = await Test.createTestingModule({ imports: [SchedulerModule] }).compile();
  const scheduler = moduleRef.createNestMicroservice({
    transport: Transport.TCP,
    options: { host: '127.0.0.1', port: schedulerPort },
  });
  await scheduler.listen();
  hold(() => scheduler.close());
  return scheduler;
}

/** What a pattern answers, or the `{ name, message }` its RpcException carried. */
async function ask<T>(
  client: ClientProxy,
  pattern: string,
  payload: unknown,
): Promise<T | { error: ElasticJobRpcError }> {
  try {
    return await firstValueFrom(client.send<T>(pattern, payload));
  } catch (error) {
    return { error: error as ElasticJobRpcError };
  }
}

describe('microservices', () => {
  it('answers the operator patterns over TCP and emits item events to another service, buffering while it is away', async () => {
    ran.length = 0;
    received.length = 0;
    const [schedulerPort, otherPort] = [await findFreePort(), await findFreePort()];
    let other = await startOtherService(otherPort);
    hold(() => other.close());
    const scheduler = await startScheduler(uniqueNamespace('microservices'), schedulerPort, otherPort);
    const client = ClientProxyFactory.create({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port: schedulerPort },
    });
    hold(() => client.close());

    // Patterns: the jobs, one job, its sharding, a trigger, an item disabled; typed errors back.
    const jobs = (await ask<Array<{ jobName: string }>>(client, 'elastic-job.jobs', {})) as Array<{ jobName: string }>;
    expect(jobs.map((job) => job.jobName)).toEqual(['remote']);
    expect(await ask(client, 'elastic-job.job', { jobName: 'remote' })).toMatchObject({
      jobName: 'remote',
      configuration: { shardingTotalCount: 3 },
    });
    expect(await ask(client, 'elastic-job.job', { jobName: 'nope' })).toEqual({
      error: {
        name: 'JobNotFoundError',
        code: 'JOB_NOT_FOUND',
        message: expect.stringContaining("No job named 'nope'"),
      },
    });
    expect(await ask(client, 'elastic-job.trigger', {})).toEqual({
      error: {
        name: 'InvalidOperationError',
        code: 'INVALID_ARGUMENT',
        message: "elastic-job.trigger: invalid 'jobName': is required",
      },
    });
    const triggered = await ask<string[]>(client, 'elastic-job.trigger', { jobName: 'remote' });
    expect(triggered).toHaveLength(1);
    await eventually(
      () => ran.length,
      (n) => n === 3,
      10_000,
      'the triggered items',
    );

    // The other service heard the completions through its @EventPattern.
    await eventually(
      () => received.length,
      (n) => n === 3,
      10_000,
      'the item events over TCP',
    );
    expect(received.map((event) => event.shardingItem).sort()).toEqual([0, 1, 2]);
    expect(received.every((event) => event.jobName === 'remote' && event.type === 'item.completed')).toBe(true);

    expect(await ask(client, 'elastic-job.disable-item', { jobName: 'remote', item: 1 })).toEqual({
      jobName: 'remote',
      item: 1,
      disabled: true,
    });
    const sharding = (await ask<Array<{ item: number; status: string }>>(client, 'elastic-job.sharding', {
      jobName: 'remote',
    })) as Array<{ item: number; status: string }>;
    expect(sharding.find((item) => item.item === 1)?.status).toBe('DISABLED');

    // The other service goes away: the events of a firing wait, and arrive when it is back on its port.
    await other.close();
    await ask(client, 'elastic-job.trigger', { jobName: 'remote' });
    await eventually(
      () => ran.length,
      (n) => n === 5,
      10_000,
      'a firing while the other service is away',
    );
    const events = scheduler.get(ElasticJobTransportEvents);
    await eventually(
      () => events.stats.buffered,
      (n) => n === 2,
      10_000,
      'two events waiting',
    );
    other = await startOtherService(otherPort);
    await eventually(
      () => received.length,
      (n) => n === 5,
      40_000,
      'the waiting events delivered',
    );
    expect(events.stats).toMatchObject({ sent: 5, dropped: 0, buffered: 0 });
  });
});

// ------------------------------------------------------------------ transport jobs

const worked: number[] = [];
/** The fields each payload had: the item's, never its logger nor reportProgress. */
const payloadKeys = new Set<string>();

@Controller()
class ReportWorker {
  @MessagePattern('report.build')
  async build(@Payload() item: TransportItem): Promise<string> {
    worked.push(item.shardingItem);
    payloadKeys.add(Object.keys(item).sort().join(','));
    if (item.shardingItem === 2) throw new RpcException({ message: `no data for ${item.shardingParameter}` });
    if (item.shardingItem === 3) await new Promise((resolve) => setTimeout(resolve, 3000));
    return `report ${item.shardingParameter} of ${item.jobName}`;
  }
}

@Module({ controllers: [ReportWorker] })
class WorkerModule {}

describe('transport jobs', () => {
  it('sends each item to a worker service; its reply or error is the result, a slow reply times out', async () => {
    worked.length = 0;
    const workerPort = await findFreePort();
    const worker = await NestFactory.createMicroservice(WorkerModule, {
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port: workerPort },
      logger: ['error'],
    });
    await worker.listen();
    hold(() => worker.close());
    @Module({
      imports: [
        ElasticJobModule.forRoot(appOptions(uniqueNamespace('transport-job'))),
        ClientsModule.register([
          { name: 'WORKERS', transport: Transport.TCP, options: { host: '127.0.0.1', port: workerPort } },
        ]),
      ],
      providers: [
        transportJob({
          jobName: 'remote-report',
          cron: '0 0 0 1 1 *',
          shardingTotalCount: 4,
          shardingItemParameters: '0=eu,1=us,2=ap,3=sa',
          client: 'WORKERS',
          pattern: 'report.build',
          timeoutMilliseconds: 1000,
        }),
      ],
    })
    class SchedulerModule {}
    const app = await Test.createTestingModule({ imports: [SchedulerModule] }).compile();
    await app.init();
    hold(() => app.close());
    const registry = app.get(ElasticJobRegistry);
    const completions: ItemCompletedEvent[] = [];
    const subscription = registry.events$.subscribe((event) => {
      if (event.type === 'item.completed') completions.push(event);
    });
    hold(() => subscription.unsubscribe());

    await registry.trigger('remote-report');
    await eventually(
      () => completions.length,
      (n) => n === 4,
      15_000,
      'four items answered or failed',
    );
    expect(worked.sort()).toEqual([0, 1, 2, 3]);
    expect([...payloadKeys]).toEqual([
      'attempt,jobName,jobParameter,shardingItem,shardingParameter,shardingTotalCount,taskId',
    ]);
    const byItem = new Map(completions.map((event) => [event.shardingItem, event]));
    expect(byItem.get(0)?.success).toBe(true);
    expect(byItem.get(1)?.success).toBe(true);
    expect(byItem.get(2)).toMatchObject({ success: false });
    expect(byItem.get(2)?.failureCause).toContain("'report.build' for item 2 failed: no data for ap");
    expect(byItem.get(3)?.failureCause).toContain("no reply to 'report.build' for item 3 in 1000 ms");
    expect(registry.getJobStatus('remote-report').lastCompletions[2]).toMatchObject({ success: false });
  });
});
