import { Module } from '@nestjs/common';
import { ElasticJobModule } from '../lib/index.js';
import { CacheCleanupJob } from './jobs/cache-cleanup.job.js';
import { OutboxRelayJob } from './jobs/outbox-relay.job.js';
import { RegionReportJob } from './jobs/region-report.job.js';

@Module({
  imports: [
    ElasticJobModule.forRoot({
      zookeeper: {
        serverLists: process.env.ZK_CONNECT ?? '127.0.0.1:2181',
        namespace: process.env.ZK_NAMESPACE ?? 'elastic-job-sample',
        sessionTimeoutMilliseconds: 10_000,
      },
      shutdownTimeoutMilliseconds: 5_000,
    }),
  ],
  providers: [RegionReportJob, CacheCleanupJob, OutboxRelayJob],
})
export class AppModule {}
