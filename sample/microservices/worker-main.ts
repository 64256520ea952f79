import 'reflect-metadata';
import { Controller, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventPattern, MessagePattern, Payload, Transport, type MicroserviceOptions } from '@nestjs/microservices';
import type { ItemCompletedEvent, Wire } from '../../lib/index.js';
import type { TransportItem } from '../../lib/microservices/index.js';

/** A worker service: it renders the items the scheduler sends, and hears what became of them. */
@Controller()
class ThumbnailWorker {
  private readonly logger = new Logger(`worker:${process.env.WORKER_NAME ?? process.pid}`);

  @MessagePattern('thumbnails.render')
  async render(@Payload() item: TransportItem): Promise<string> {
    await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 100));
    this.logger.log(`rendered thumbnail ${item.shardingParameter} (item ${item.shardingItem})`);
    return `thumbnail-${item.shardingParameter}.png`;
  }

  @EventPattern('elastic-job.item.completed')
  completed(@Payload() event: Wire<ItemCompletedEvent>): void {
    this.logger.log(`heard: ${event.jobName} item ${event.shardingItem} ${event.success ? 'done' : 'FAILED'}`);
  }
}

@Module({ controllers: [ThumbnailWorker] })
class WorkerModule {}

async function bootstrap(): Promise<void> {
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(WorkerModule, {
    transport: Transport.NATS,
    // One queue group: each item (and each event) goes to one of the workers.
    options: { servers: [process.env.NATS_URL ?? 'nats://127.0.0.1:4222'], queue: 'thumbnail-workers' },
  });
  app.enableShutdownHooks();
  await app.listen();
}

void bootstrap();
