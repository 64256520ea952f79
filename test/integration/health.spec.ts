import { Controller, Get, Injectable, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { ElasticJobModule, ShardedJob } from '../../lib/index.js';
import { ElasticJobHealthIndicator } from '../../lib/terminus/index.js';
import { appOptions } from '../support/app.js';
import { hold, proxyTo, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace } from '../support/zk.js';

/**
 * The @nestjs/terminus indicator (`nestjs-elastic-job/terminus`) in a health controller as Terminus documents it:
 * up while connected and registered; down while ZooKeeper is unreachable and while a job cannot register.
 */

afterEach(async () => {
  await releaseAll();
});

@Injectable()
class NightlyJob {
  @ShardedJob({ jobName: 'nightly', cron: '0 0 2 * * *', shardingTotalCount: 2 })
  run(): void {}
}

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly elasticJob: ElasticJobHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.elasticJob.isHealthy()]);
  }
}

async function bootHealth(options: Parameters<typeof ElasticJobModule.forRoot>[0]) {
  @Module({
    imports: [TerminusModule, ElasticJobModule.forRoot(options)],
    controllers: [HealthController],
    providers: [NightlyJob, ElasticJobHealthIndicator],
  })
  class AppModule {}
  const app = await Test.createTestingModule({ imports: [AppModule] }).compile();
  await app.init();
  hold(() => app.close());
  return app.get(HealthController);
}

/** What the controller answers: the result, or the body of the 503 Terminus throws. */
async function probe(controller: HealthController): Promise<{ status: string; details: Record<string, unknown> }> {
  try {
    return (await controller.check()) as { status: string; details: Record<string, unknown> };
  } catch (error) {
    return (error as { getResponse(): { status: string; details: Record<string, unknown> } }).getResponse();
  }
}

describe('health indicator', () => {
  it('is up when connected and registered, down while ZooKeeper is unreachable, up again after', async () => {
    const proxy = await proxyTo();
    const namespace = uniqueNamespace('health');
    const options = appOptions(namespace);
    options.zookeeper = { ...options.zookeeper, serverLists: proxy.connectString };
    const controller = await bootHealth(options);
    const up = await eventually(
      () => probe(controller),
      (result) => result.status === 'ok',
      10_000,
      'up',
    );
    expect(up.details['elastic-job']).toMatchObject({
      status: 'up',
      connected: true,
      jobs: { nightly: { registered: true, registration: 'ok', isLeader: true, shardingItems: [] } },
    });

    proxy.freeze();
    const down = await eventually(
      () => probe(controller),
      (result) => result.status === 'error',
      15_000,
      'down',
    );
    expect(down.details['elastic-job']).toMatchObject({
      status: 'down',
      connected: false,
      message: 'not connected to ZooKeeper',
    });
    proxy.restore();
    await eventually(
      () => probe(controller),
      (result) => result.status === 'ok',
      20_000,
      'up again',
    );
  });

  it('is down while its jobs cannot register (ZooKeeper unreachable at start), up once they have', async () => {
    const proxy = await proxyTo();
    proxy.cut();
    const options = appOptions(uniqueNamespace('health-start'));
    options.zookeeper = { ...options.zookeeper, serverLists: proxy.connectString, connectionTimeoutMilliseconds: 1000 };
    const controller = await bootHealth(options); // the app starts; registration waits for ZooKeeper
    expect((await probe(controller)).details['elastic-job']).toMatchObject({
      status: 'down',
      connected: false,
      jobs: { nightly: { registered: false, registration: 'retrying' } },
      message: "not connected to ZooKeeper; job 'nightly' registration retrying",
    });
    proxy.restore();
    await eventually(
      () => probe(controller),
      (result) => result.status === 'ok',
      30_000,
      'up once registered',
    );
  });

  it('is up with enabled: false, which schedules nothing', async () => {
    const controller = await bootHealth({ enabled: false });
    expect(await probe(controller)).toMatchObject({
      status: 'ok',
      details: { 'elastic-job': { status: 'up', enabled: false } },
    });
  });

  it("reports each workflow's coordinator on this instance", async () => {
    @Injectable()
    class Steps {
      @ShardedJob({ jobName: 'load', oneOff: true, shardingTotalCount: 1 })
      load(): void {}
    }
    @Module({
      imports: [
        TerminusModule,
        ElasticJobModule.forRoot(
          appOptions(uniqueNamespace('health-workflow'), { workflows: [{ name: 'nightly', steps: { load: [] } }] }),
        ),
      ],
      controllers: [HealthController],
      providers: [Steps, ElasticJobHealthIndicator],
    })
    class WorkflowApp {}
    const app = await Test.createTestingModule({ imports: [WorkflowApp] }).compile();
    await app.init();
    hold(() => app.close());
    const up = await eventually(
      () => probe(app.get(HealthController)),
      (result) => result.status === 'ok',
      10_000,
      'up',
    );
    expect(up.details['elastic-job']).toMatchObject({ workflows: { nightly: { started: true, isLeader: true } } });
  });
});
