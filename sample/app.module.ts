import { Module } from '@nestjs/common';
import { ElasticJobConsoleModule } from '../lib/console/index.js';
import { ElasticJobModule } from '../lib/index.js';
import { CacheCleanupJob } from './jobs/cache-cleanup.job.js';
import { NIGHTLY_EXPORT, NightlyExportJobs } from './jobs/nightly-export.workflow.js';
import { OutboxRelayJob } from './jobs/outbox-relay.job.js';
import { RegionReportJob } from './jobs/region-report.job.js';
import { LocalhostOnlyGuard } from './localhost-only.guard.js';

@Module({
  imports: [
    ElasticJobModule.forRoot({
      zookeeper: {
        serverLists: process.env.ZK_CONNECT ?? '127.0.0.1:2181',
        namespace: process.env.ZK_NAMESPACE ?? 'elastic-job-sample',
        sessionTimeoutMilliseconds: 10_000,
      },
      shutdownTimeoutMilliseconds: 5_000,
      workflows: [NIGHTLY_EXPORT],
    }),
    // The web console, on the instance given a CONSOLE_PORT (main.ts): actions on, for requests from this machine.
    ...(process.env.CONSOLE_PORT
      ? [ElasticJobConsoleModule.forRoot({ actions: true, guard: new LocalhostOnlyGuard() })]
      : []),
  ],
  providers: [RegionReportJob, CacheCleanupJob, OutboxRelayJob, NightlyExportJobs],
})
export class AppModule {}
