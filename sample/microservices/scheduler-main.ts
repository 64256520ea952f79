import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { SchedulerModule } from './scheduler.module.js';

/** One scheduler instance: a NATS microservice (it answers the patterns) that runs the sharded job. */
async function bootstrap(): Promise<void> {
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(SchedulerModule, {
    transport: Transport.NATS,
    // A queue group: one scheduler instance answers each request (a trigger is written once, not once per instance).
    options: { servers: [process.env.NATS_URL ?? 'nats://127.0.0.1:4222'], queue: 'elastic-job' },
  });
  app.enableShutdownHooks();
  await app.listen();
}

void bootstrap();
