import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ElasticJobError,
  ElasticJobModule,
  ElasticJobOperator,
  ElasticJobRegistry,
  InvalidOperationError,
  JobConfigurationError,
  JobNotFoundError,
  ShardedJob,
  type ShardingContext,
} from '../../lib/index.js';
import { hold, releaseAll } from '../support/resources.js';

/**
 * What a user's e2e test does with an app that imports ElasticJobModule: `enabled: false` (here through
 * forRootAsync, as apps configure it) boots without ZooKeeper, and runJob() runs a handler with a given item.
 * ZooKeeper is pointed at a port where nothing listens: nothing may try it.
 */

afterEach(async () => {
  await releaseAll();
});

const seen: ShardingContext[] = [];

@Injectable()
class ReportJob {
  @ShardedJob({
    jobName: 'report',
    cron: '0 0 2 * * *',
    shardingTotalCount: 3,
    shardingItemParameters: '0=eu,1=us,2=ap',
    jobParameter: 'full',
  })
  build(context: ShardingContext): string {
    seen.push(context);
    return `report for ${context.shardingParameter}`;
  }
}

@Module({
  imports: [
    ElasticJobModule.forRootAsync({
      useFactory: () => ({
        zookeeper: { serverLists: '127.0.0.1:1', namespace: 'app', connectionTimeoutMilliseconds: 60_000 },
        enabled: process.env.ELASTIC_JOB_TEST_ENABLED === 'true',
      }),
    }),
  ],
  providers: [ReportJob],
})
class AppModule {}

describe('testing an app that imports ElasticJobModule', () => {
  it('enabled: false boots without ZooKeeper; runJob() runs one item with the whole ShardingContext', async () => {
    const app = await Test.createTestingModule({ imports: [AppModule] }).compile();
    hold(() => app.close());
    await app.init(); // would wait the 60 s connection timeout for ZooKeeper at 127.0.0.1:1 if it tried
    const jobs = app.get(ElasticJobRegistry);
    expect(jobs.getJobNames()).toEqual(['report']);
    seen.length = 0;
    expect(await jobs.runJob('report', { shardingItem: 1 })).toBe('report for us');
    expect(seen[0]).toMatchObject({
      jobName: 'report',
      shardingItem: 1,
      shardingParameter: 'us',
      shardingTotalCount: 3,
      jobParameter: 'full',
      taskId: 'report@-@1@-@READY@-@runJob',
    });
    expect(seen[0]!.signal.aborted).toBe(false);
    expect(await jobs.runJob('report', { shardingItem: 2, jobParameter: 'delta', shardingParameter: 'x' })).toBe(
      'report for x',
    );
    expect(seen[1]).toMatchObject({ jobParameter: 'delta', shardingParameter: 'x' });
    await expect(jobs.runJob('report', { shardingItem: 3 })).rejects.toThrow(InvalidOperationError);
    await expect(jobs.runJob('nope')).rejects.toThrow(JobNotFoundError);
    // What needs the cluster says why it cannot, instead of waiting.
    await expect(jobs.trigger('report')).rejects.toThrow(ElasticJobError);
    await expect(jobs.trigger('report')).rejects.toThrow(/enabled: false/);
    await expect(app.get(ElasticJobOperator).getAllJobsBriefInfo()).rejects.toThrow(/enabled: false/);
  });

  it('enabled: false needs no ZooKeeper settings at all (a test module)', async () => {
    @Module({ imports: [ElasticJobModule.forRoot({ enabled: false })], providers: [ReportJob] })
    class TestAppModule {}
    const app = await Test.createTestingModule({ imports: [TestAppModule] }).compile();
    hold(() => app.close());
    await app.init();
    expect(await app.get(ElasticJobRegistry).runJob('report', { shardingItem: 0 })).toBe('report for eu');
  });

  it('enabled: false still validates the jobs: a bad @ShardedJob fails the boot', async () => {
    @Injectable()
    class BadJob {
      @ShardedJob({ jobName: 'bad', cron: 'every minute', shardingTotalCount: 1 })
      run(): void {}
    }
    @Module({
      imports: [
        ElasticJobModule.forRoot({ zookeeper: { serverLists: '127.0.0.1:1', namespace: 'app' }, enabled: false }),
      ],
      providers: [BadJob],
    })
    class BadModule {}
    const moduleRef = await Test.createTestingModule({ imports: [BadModule] }).compile();
    hold(() => moduleRef.close());
    await expect(moduleRef.init()).rejects.toThrow(JobConfigurationError);
  });
});
