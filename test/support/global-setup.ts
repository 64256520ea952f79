import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { ensureZookeeperInstalled, LocalZookeeper } from '../../lib/devtools/local-zookeeper.js';
import { javacArguments } from './java.js';

declare module 'vitest' {
  export interface ProvidedContext {
    zkConnect: string;
    zkPort: number;
  }
}

/**
 * One throwaway ZooKeeper for the whole run (each test uses its own namespace), unless ZK_CONNECT points at an
 * existing ensemble. Also compiles the fixtures that cluster tests run as separate Node processes (the whole
 * tsconfig.json: `npm test`'s type-check, see package.json), and the Java peers of test/java/ (test/support/java.ts).
 * The three run side by side: tsc, javac and ZooKeeper's JVM start each leave a core idle half the time.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  ensureZookeeperInstalled(); // the JDK and the jars javac compiles against, as LocalZookeeper.start() checks them
  const external = process.env.ZK_CONNECT;
  const [started, ...compiled] = await Promise.allSettled([
    external ? undefined : LocalZookeeper.start(),
    run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json']),
    run(
      'javac',
      javacArguments(
        readdirSync('test/java')
          .filter((file) => file.endsWith('.java'))
          .map((file) => `test/java/${file}`),
      ),
    ),
  ]);
  const failed = [started, ...compiled].find((result) => result.status === 'rejected');
  if (failed) {
    if (started.status === 'fulfilled') await started.value?.stop();
    throw failed.reason;
  }
  const zk = started.status === 'fulfilled' ? started.value : undefined;
  if (!zk) {
    project.provide('zkConnect', external!);
    project.provide('zkPort', Number(external!.split(',')[0]?.split(':')[1] ?? 2181));
    return async () => undefined;
  }
  project.provide('zkConnect', zk.connectString);
  project.provide('zkPort', zk.port);
  return async () => {
    await zk.stop();
  };
}

/** Runs a compiler with its output on ours; rejects when it fails (a type error fails the run before any test). */
function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'inherit' });
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? code})`)),
    );
  });
}
