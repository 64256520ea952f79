import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

/** One instance of the sample app. Run several: every item of every firing runs on exactly one of them. */
async function bootstrap(): Promise<void> {
  // The instance that serves the console is an HTTP app; the others need no HTTP server.
  const port = process.env.CONSOLE_PORT;
  let app;
  if (port) {
    const http = await NestFactory.create(AppModule);
    await http.listen(Number(port), '127.0.0.1');
    app = http;
  } else {
    app = await NestFactory.createApplicationContext(AppModule);
  }
  // Kubernetes and Ctrl-C send signals: the jobs drain, leave ZooKeeper, and peers take over at once.
  app.enableShutdownHooks();
}

void bootstrap();
