/**
 * The microservices sample: a throwaway ZooKeeper and NATS (Debian's packages), two scheduler instances
 * (scheduler-main.ts) sharding a transport job, two worker services (worker-main.ts) rendering its items, and a
 * client that asks the schedulers through `elastic-job.*` patterns. Prints every process's log, then who rendered
 * which item, what the patterns answered and how long they took, and stops everything.
 */
import { ClientProxyFactory, Transport } from '@nestjs/microservices';
import type { ChildProcess } from 'node:child_process';
import { startPrefixed } from '../prefixed-process.js';
import { firstValueFrom } from 'rxjs';
import { LocalZookeeper } from '../../lib/devtools/local-zookeeper.js';
import { LocalNats } from '../../test/support/local-nats.js';

const RUN_MS = 20_000;
const rendered = new Map<string, string[]>();

function start(name: string, index: number, script: string, env: Record<string, string>): ChildProcess {
  return startPrefixed({
    name,
    index,
    width: 10,
    script,
    env: { ...process.env, ...env, WORKER_NAME: name, NO_COLOR: '1' },
    onLine: (line) => {
      const match = /rendered thumbnail (\w+)/.exec(line);
      if (match) rendered.set(name, [...(rendered.get(name) ?? []), match[1]!]);
    },
  });
}

async function main(): Promise<void> {
  const zk = await LocalZookeeper.start({ tickTimeMs: 500 });
  const nats = await LocalNats.create();
  const env = { ZK_CONNECT: zk.connectString, NATS_URL: nats.url, ZK_NAMESPACE: `elastic-job-sample-ms-${Date.now()}` };
  process.stdout.write(`ZooKeeper ${zk.connectString}, NATS ${nats.url}\n\n`);
  const children = [
    start('scheduler1', 0, 'build/sample/microservices/scheduler-main.js', env),
    start('scheduler2', 1, 'build/sample/microservices/scheduler-main.js', env),
    start('worker1', 2, 'build/sample/microservices/worker-main.js', env),
    start('worker2', 3, 'build/sample/microservices/worker-main.js', env),
  ];
  await new Promise((resolve) => setTimeout(resolve, 6_000));

  const client = ClientProxyFactory.create({ transport: Transport.NATS, options: { servers: [nats.url] } });
  const timed = async (pattern: string, payload: unknown): Promise<string> => {
    const started = performance.now();
    const answer: unknown = await firstValueFrom(client.send(pattern, payload));
    const shown = JSON.stringify(answer);
    return (
      `${pattern} ${JSON.stringify(payload)} → ${shown.length > 160 ? `${shown.slice(0, 160)}…` : shown} ` +
      `(${Math.round(performance.now() - started)} ms)`
    );
  };
  const answers = [await timed('elastic-job.jobs', {}), await timed('elastic-job.trigger', { jobName: 'thumbnails' })];
  await new Promise((resolve) => setTimeout(resolve, RUN_MS));
  answers.push(await timed('elastic-job.sharding', { jobName: 'thumbnails' })); // sharded by now
  await client.close();

  process.stdout.write('\nWho rendered which thumbnail (the NATS queue group spreads the items):\n');
  for (const [name, items] of [...rendered].sort()) process.stdout.write(`  ${name}: ${items.join(' ')}\n`);
  process.stdout.write('\nWhat the client asked the schedulers through patterns:\n');
  for (const answer of answers) process.stdout.write(`  ${answer}\n`);
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    ),
  );
  await nats.stop();
  await zk.stop();
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
