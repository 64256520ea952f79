import { createServer, type Socket } from 'node:net';
import { Logger } from '@nestjs/common';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import { hold, releaseAll } from '../support/resources.js';

/** A start-up that cannot connect says why, per server (issue 14, item 7): the client itself never tells. */

afterEach(async () => {
  await releaseAll();
  vi.restoreAllMocks();
});

async function startWarning(serverLists: string): Promise<string> {
  const warnings = vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  const registry = new ZookeeperRegistryCenter({
    serverLists,
    namespace: 'diagnosis',
    connectionTimeoutMilliseconds: 500,
  });
  hold(() => registry.close());
  expect(await registry.start()).toBe(false);
  const line = warnings.mock.calls.map((call) => String(call[0])).find((text) => text.startsWith('not connected'));
  warnings.mockRestore();
  return line ?? '';
}

describe('why ZooKeeper cannot be reached at start-up', () => {
  it('a closed port: refused; an unknown host: unknown; a listener that is not ZooKeeper: no session', async () => {
    expect(await startWarning('127.0.0.1:1')).toMatch(
      /127\.0\.0\.1:1 refused the connection \(is ZooKeeper running there\?\)/,
    );
    expect(await startWarning('no-such-host.invalid:2181')).toMatch(/no-such-host\.invalid:2181 is an unknown host/);
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket)); // accepts, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    hold(() => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => silent.close(resolve));
    });
    const port = (silent.address() as { port: number }).port;
    expect(await startWarning(`127.0.0.1:${port}`)).toMatch(/accepts connections but gave no ZooKeeper session/);
  });
});
