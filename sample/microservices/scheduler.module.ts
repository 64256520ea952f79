import { Module } from '@nestjs/common';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { ElasticJobModule } from '../../lib/index.js';
import { elasticJobMessagesController, transportEvents, transportJob } from '../../lib/microservices/index.js';

const servers = [process.env.NATS_URL ?? 'nats://127.0.0.1:4222'];

/**
 * The scheduler: it owns the schedule and the sharding, and hands every item to the worker services over NATS.
 * Other services reach it through `elastic-job.*` patterns, and hear its item events.
 */
@Module({
  imports: [
    ElasticJobModule.forRoot({
      zookeeper: {
        serverLists: process.env.ZK_CONNECT ?? '127.0.0.1:2181',
        namespace: process.env.ZK_NAMESPACE ?? 'elastic-job-sample-microservices',
      },
    }),
    ClientsModule.register([
      { name: 'WORKERS', transport: Transport.NATS, options: { servers } },
      { name: 'EVENTS', transport: Transport.NATS, options: { servers } },
    ]),
  ],
  controllers: [elasticJobMessagesController()],
  providers: [
    // 8 thumbnails every 6 seconds; each item goes to whichever worker the NATS queue group picks.
    transportJob({
      jobName: 'thumbnails',
      cron: '*/6 * * * * *',
      shardingTotalCount: 8,
      shardingItemParameters: '0=a,1=b,2=c,3=d,4=e,5=f,6=g,7=h',
      failover: true,
      client: 'WORKERS',
      pattern: 'thumbnails.render',
      timeoutMilliseconds: 10_000,
    }),
    transportEvents({ client: 'EVENTS', types: ['item.completed'] }),
  ],
})
export class SchedulerModule {}
