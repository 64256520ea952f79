import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { findFreePort, fourLetterWord } from '../../lib/devtools/local-zookeeper.js';
import { runCli } from '../support/cli.js';
import { CHILD_NODE_FLAGS, LineProcess } from '../support/line-process.js';
import { startRegistry, uniqueNamespace } from '../support/zk.js';

/** `npx nestjs-elastic-job zookeeper`: a ZooKeeper for a user's own development (issue 14, item 6). */

const processes: LineProcess[] = [];
afterEach(() => {
  for (const process of processes.splice(0)) process.kill('SIGKILL');
});

describe('nestjs-elastic-job zookeeper', () => {
  it('runs a local ZooKeeper, prints its connect string, serves it, and stops and cleans up on Ctrl-C', async () => {
    const port = await findFreePort();
    const server = new LineProcess(process.execPath, [
      ...CHILD_NODE_FLAGS,
      'build/lib/cli/main.js',
      'zookeeper',
      '--port',
      String(port),
    ]);
    processes.push(server);
    await server.waitForLine(new RegExp(`^ZooKeeper running at 127\\.0\\.0\\.1:${port} `), 60_000);
    expect(await fourLetterWord('127.0.0.1', port, 'ruok', 1000)).toBe('imok');
    expect(server.lines).toContain(`export ZK_CONNECT=127.0.0.1:${port}`);
    const dataDir = /\(data in (.+), removed on exit\)/.exec(server.lines.join('\n'))![1]!;
    expect(existsSync(dataDir)).toBe(true);
    const registry = await startRegistry({ serverLists: `127.0.0.1:${port}`, namespace: uniqueNamespace('dev') });
    await registry.persist('/hello', Buffer.from('world'));
    expect((await registry.getData('/hello'))?.data.toString()).toBe('world');
    await registry.close();
    server.kill('SIGINT');
    expect(await server.exited).toBe(0);
    expect(server.lines).toContain('ZooKeeper stopped.');
    expect(existsSync(dataDir)).toBe(false);
    expect(await fourLetterWord('127.0.0.1', port, 'ruok', 1000).catch(() => 'refused')).not.toBe('imok');
  });

  it('refuses a port another server holds (it would answer for ours): exit 1, nothing started', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as { port: number }).port;
    try {
      const result = await runCli(['zookeeper', '--port', String(port)]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`port ${port} is in use`));
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('refuses a bad --port with exit 2 and its usage', async () => {
    const result = await runCli(['zookeeper', '--port', 'high']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--port takes 1\.\.65535, got 'high'/);
    expect(result.stderr).toMatch(/Usage: nestjs-elastic-job zookeeper \[--port N\]/);
  });
});
