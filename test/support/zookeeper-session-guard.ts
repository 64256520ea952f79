import zookeeper from 'node-zookeeper-client';
import { afterAll, beforeAll, expect } from 'vitest';

/**
 * Fails the test file that leaves a ZooKeeper client open. With `isolate: false` (vitest.config.ts) a worker runs file
 * after file in one process, so a session a file forgets keeps pinging in the next files: a later file's deliberate
 * event-loop stall (test/integration/event-loop-stall.spec.ts) then expires it, and its reconnection attempts and
 * watches run inside other files' tests. Every client in this process is made by node-zookeeper-client's
 * createClient (lib/registry/zookeeper-client.adapter.ts, and the tests' plain clients), so wrapping it once per worker
 * sees them all: a client counts as open from connect() until close().
 */
interface Tracked {
  file: string;
  stack: string;
}

const TRACKED = Symbol.for('nestjs-elastic-job.test.open-zookeeper-clients');
type Registry = Map<object, Tracked>;
const holder = globalThis as { [TRACKED]?: { open: Registry; file: string } };

function tracker(): { open: Registry; file: string } {
  let state = holder[TRACKED];
  if (state) return state;
  state = { open: new Map(), file: 'unknown' };
  holder[TRACKED] = state;
  const created = state;
  const createClient = zookeeper.createClient;
  // The exports object is the one the adapter's default import reads createClient from at each call.
  (zookeeper as { createClient: typeof createClient }).createClient = (...args: Parameters<typeof createClient>) => {
    const client = createClient(...args);
    const connect = client.connect.bind(client);
    const close = client.close.bind(client);
    client.connect = () => {
      created.open.set(client, { file: created.file, stack: new Error('opened here').stack ?? '' });
      connect();
    };
    client.close = () => {
      created.open.delete(client);
      close();
    };
    return client;
  };
  return state;
}

const state = tracker();

beforeAll(() => {
  state.file = (expect.getState().testPath ?? 'unknown').replace(process.cwd() + '/', '');
});

afterAll(() => {
  const leaked = [...state.open.values()].filter((tracked) => tracked.file === state.file);
  // Reported once: the next file's guard must not fail for this one's leak.
  for (const [client, tracked] of state.open) if (tracked.file === state.file) state.open.delete(client);
  if (leaked.length > 0)
    throw new Error(
      `${leaked.length} ZooKeeper client(s) opened by ${state.file} were never closed (close the registry center, ` +
        `operator or app that owns each):\n${leaked.map((tracked) => tracked.stack).join('\n\n')}`,
    );
});
