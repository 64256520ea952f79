/** What every bench shares: rounds, figures, the bench ZooKeeper and the processes the benches start. */
import { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import { fourLetterWord, LocalZookeeper } from '../../lib/devtools/local-zookeeper.js';
import { LineProcess } from '../../test/support/line-process.js';

export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
export const quick = process.env.BENCH_QUICK === '1';
let server: LocalZookeeper | undefined;
let counter = 0;
export const ns = (name: string): string => `bench-${name}-${Date.now()}-${counter++}`;
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface Figure {
  median: number;
  min: number;
  max: number;
  unit: string;
  samples: number[];
}

export function figure(samples: number[], unit: string): Figure {
  const sorted = [...samples].sort((a, b) => a - b);
  const median =
    sorted.length % 2
      ? sorted[(sorted.length - 1) / 2]!
      : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
  return {
    median: round(median),
    min: round(sorted[0]!),
    max: round(sorted[sorted.length - 1]!),
    unit,
    samples: samples.map(round),
  };
}
export const round = (v: number): number => Math.round(v * 100) / 100;
export const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

export function benchApp(env: Record<string, string>): LineProcess {
  return new LineProcess(process.execPath, ['--expose-gc', 'build/bench/fixtures/bench-app.js'], {
    ...process.env,
    ZK_CONNECT: zk().connectString,
    ...env,
  });
}

export async function observer(namespace: string): Promise<ZookeeperRegistryCenter> {
  const registry = new ZookeeperRegistryCenter({
    serverLists: zk().connectString,
    namespace,
    sessionTimeoutMilliseconds: 10_000,
  });
  await registry.start();
  return registry;
}

export async function mntr(): Promise<Record<string, number>> {
  const text = await fourLetterWord('127.0.0.1', zk().port, 'mntr');
  return Object.fromEntries(
    text
      .trim()
      .split('\n')
      .map((line) => line.split('\t'))
      .filter((p) => p.length === 2 && !Number.isNaN(Number(p[1])))
      .map(([k, v]) => [k!, Number(v)]),
  );
}

/** The throwaway ZooKeeper every bench runs on (a fresh server of our own: some figures come from its counters). */
export function zk(): LocalZookeeper {
  if (!server) throw new Error('the bench ZooKeeper is not started (startZookeeper())');
  return server;
}

export async function startZookeeper(): Promise<LocalZookeeper> {
  server = await LocalZookeeper.start({ tickTimeMs: 200, fastStart: false });
  return server;
}

export async function stopZookeeper(): Promise<void> {
  await server?.stop();
  server = undefined;
}
