import { Logger } from '@nestjs/common';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dumpTree } from '../../lib/cli/format/tree-dump.js';
import { isConnectionTrouble } from '../../lib/errors/elastic-job.errors.js';
import type { ReadAnswer, ReadRequest } from '../../lib/registry/registry.types.js';
import { TreeCache } from '../../lib/registry/tree-cache.js';
import type { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import type { ZookeeperTransport } from '../../lib/registry/zookeeper-transport.js';
import { startRegistry, uniqueNamespace } from '../support/zk.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
  vi.restoreAllMocks();
});

async function registryWithTree(): Promise<ZookeeperRegistryCenter> {
  const registry = await startRegistry({ namespace: uniqueNamespace('multiread') });
  cleanups.push(() => registry.close());
  await registry.createWithParents('/job/config', Buffer.from('{"a":1}'), 'PERSISTENT');
  await registry.createWithParents('/job/sharding/0/instance', Buffer.from('i-1'), 'PERSISTENT');
  await registry.create('/job/sharding/1', Buffer.alloc(0));
  await registry.setData('/job/config', Buffer.from('{"a":2}'));
  return registry;
}

const reads: ReadRequest[] = [
  { path: '/job/config', what: 'data' },
  { path: '/job/missing', what: 'data' },
  { path: '/job/sharding', what: 'children' },
  { path: '/job/gone/deeper', what: 'children' },
  { path: '/job/sharding/0/instance', what: 'data' },
];

/** The same reads one request each: what multiRead must answer. */
async function oneByOne(registry: ZookeeperRegistryCenter): Promise<ReadAnswer[]> {
  return Promise.all(
    reads.map((read) => (read.what === 'data' ? registry.getData(read.path) : registry.getChildren(read.path))),
  );
}

const sorted = (answers: ReadAnswer[]): ReadAnswer[] =>
  answers.map((answer) => (Array.isArray(answer) ? [...answer].sort() : answer));

const transportOf = (registry: ZookeeperRegistryCenter): ZookeeperTransport =>
  (registry as unknown as { transport: ZookeeperTransport }).transport;

describe('readMany on a real ZooKeeper (multiRead)', () => {
  it('answers data, stats and children in one request, a missing node as undefined in its place', async () => {
    const registry = await registryWithTree();
    const expected = sorted(await oneByOne(registry));
    const before = registry.stats.reads;
    const answers = await registry.readMany(reads);
    expect(registry.stats.reads - before).toBe(1);
    expect(sorted(answers)).toEqual(expected);
    expect(answers[1]).toBeUndefined();
    expect(answers[3]).toBeUndefined();
    expect(answers[0]).toMatchObject({ data: Buffer.from('{"a":2}'), stat: { version: 1 } });
    expect(sorted([answers[2]])).toEqual([['0', '1']]);
  });

  it('coalesces the readMany calls of one tick into one request, each caller its own answers', async () => {
    const registry = await registryWithTree();
    const before = registry.stats.reads;
    const [config, children, missing] = await Promise.all([
      registry.readMany([{ path: '/job/config', what: 'data' }]),
      registry.readMany([{ path: '/job', what: 'children' }]),
      registry.readMany([{ path: '/nothing', what: 'data' }]),
    ]);
    expect(registry.stats.reads - before).toBe(1);
    expect((config[0] as { data: Buffer }).data.toString()).toBe('{"a":2}');
    expect(sorted(children)).toEqual([['config', 'sharding']]);
    expect(missing).toEqual([undefined]);
  });

  it("fills a tree cache of a peer's tree in a few requests", async () => {
    const registry = await registryWithTree();
    const before = registry.stats.reads;
    const cache = new TreeCache(registry, '/job');
    cleanups.push(() => cache.close());
    await cache.start();
    expect(cache.get('/job/sharding/0/instance')).toBe('i-1');
    expect(cache.children('/job/sharding').sort()).toEqual(['0', '1']);
    // One level a request: the root's data, its children, then each level's data and children together.
    expect(registry.stats.reads - before).toBeLessThanOrEqual(5);
  });

  it('dumps a tree (the CLI) one request a level', async () => {
    const registry = await registryWithTree();
    const before = registry.stats.reads;
    const dumped = await dumpTree(registry, '/job');
    expect(dumped.map((node) => `${node.path}=${node.value}`)).toEqual([
      '/job=',
      '/job/config={"a":2}',
      '/job/sharding=',
      '/job/sharding/0=',
      '/job/sharding/0/instance=i-1',
      '/job/sharding/1=',
    ]);
    // /job, then config and sharding, then sharding's two items, then the instance: 11 single reads.
    expect(registry.stats.reads - before).toBe(4);
  });

  it('reads one node a request, said once, when the server does not know the opcode', async () => {
    const registry = await registryWithTree();
    const expected = sorted(await oneByOne(registry));
    const warnings = vi.spyOn(Logger.prototype, 'warn');
    // An opcode no ZooKeeper knows stands for a server without multiRead (3.4, 3.5): UNIMPLEMENTED, then the server
    // closes the connection (UnimplementedRequestProcessor), so the first fallback may be lost with it.
    transportOf(registry).multiReadOpCode = 99;
    const readAgain = async (): Promise<ReadAnswer[]> => {
      for (;;) {
        try {
          return await registry.readMany(reads);
        } catch (error) {
          if (!isConnectionTrouble(error)) throw error;
          await registry.waitForConnection(30_000);
        }
      }
    };
    expect(sorted(await readAgain())).toEqual(expected);
    const before = registry.stats.reads;
    expect(sorted(await readAgain())).toEqual(expected);
    expect(registry.stats.reads - before).toBe(reads.length);
    const said = warnings.mock.calls.filter(([message]) => String(message).includes('multiRead'));
    expect(said).toHaveLength(1);
  });
});
