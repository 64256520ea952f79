import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

/** One instance of the sample app. Run several: every item of every firing runs on exactly one of them. */
async function bootstrap(): Promise<void> {
  const app = await NestFactory.createApplicationContext(AppModule);
  // Kubernetes and Ctrl-C send signals: the jobs drain, leave ZooKeeper, and peers take over at once.
  app.enableShutdownHooks();
}

void bootstrap();
