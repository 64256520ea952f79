import { randomUUID } from 'node:crypto';
import zookeeper from 'node-zookeeper-client';
import { inject } from 'vitest';
import { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import type { ZookeeperConfiguration } from '../../lib/interfaces/module-options.interface.js';

export function zkConnect(): string {
  return inject('zkConnect');
}

export function uniqueNamespace(prefix = 'test'): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export async function startRegistry(options: Partial<ZookeeperConfiguration> = {}): Promise<ZookeeperRegistryCenter> {
  const registry = new ZookeeperRegistryCenter({
    serverLists: zkConnect(),
    namespace: options.namespace ?? uniqueNamespace(),
    sessionTimeoutMilliseconds: 4000,
    connectionTimeoutMilliseconds: 10_000,
    ...options,
  });
  if (!(await registry.start())) throw new Error('test registry could not connect');
  return registry;
}

/** Polls a condition; for assertions on eventual state in tests only (the library itself never polls). */
export async function eventually<T>(
  probe: () => Promise<T> | T,
  accept: (value: T) => boolean,
  timeoutMs = 20_000,
  label = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await probe();
    if (accept(last)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${label}; last value: ${JSON.stringify(last)}`);
}

/**
 * Ends a session from outside with its id and password (docs/reference/zookeeper.md §4.4); use with the victim cut off.
 */
export async function killSession(
  credentials: { sessionId: Buffer; sessionPassword: Buffer },
  connect = zkConnect(),
): Promise<void> {
  const killer = zookeeper.createClient(connect, { sessionTimeout: 4000, ...credentials } as never);
  await new Promise<void>((resolve) => {
    // Expired already (a loaded host took the whole session timeout to get here): the server ended it, as wanted.
    const done = (): void => {
      killer.close();
      resolve();
    };
    killer.once('connected', done);
    killer.once('expired', done);
    killer.connect();
  });
  await new Promise((r) => setTimeout(r, 300));
}

/** The top-level nodes of the test server (namespaces), read with a plain client: no namespace is created. */
export async function rootChildren(connect = zkConnect()): Promise<string[]> {
  const client = zookeeper.createClient(connect, { sessionTimeout: 4000 });
  try {
    await new Promise<void>((resolve) => {
      client.once('connected', () => resolve());
      client.connect();
    });
    return await new Promise<string[]>((resolve, reject) =>
      client.getChildren('/', (error, children) => (error ? reject(error) : resolve(children))),
    );
  } finally {
    client.close();
  }
}
