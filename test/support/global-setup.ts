import { execFileSync } from 'node:child_process';
import type { TestProject } from 'vitest/node';
import { LocalZookeeper } from '../../lib/devtools/local-zookeeper.js';

declare module 'vitest' {
  export interface ProvidedContext {
    zkConnect: string;
    zkPort: number;
  }
}

/**
 * One throwaway ZooKeeper for the whole run (each test uses its own namespace), unless ZK_CONNECT points at an
 * existing ensemble. Also compiles the fixtures that cluster tests run as separate Node processes.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { stdio: 'inherit' });
  const external = process.env.ZK_CONNECT;
  if (external) {
    project.provide('zkConnect', external);
    project.provide('zkPort', Number(external.split(',')[0]?.split(':')[1] ?? 2181));
    return async () => undefined;
  }
  const zk = await LocalZookeeper.start();
  project.provide('zkConnect', zk.connectString);
  project.provide('zkPort', zk.port);
  return async () => {
    await zk.stop();
  };
}
