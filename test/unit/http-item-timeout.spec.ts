import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ShardingContext } from '../../lib/interfaces/sharding-context.interface.js';
import { HttpItemExecutor } from '../../lib/job/plugins/http-item-executor.js';

// A real loopback server answering after SLOW_MS; the item's timeout is far shorter.
const SLOW_MS = 1500;
let server: Server;
let url = '';

beforeAll(async () => {
  server = createServer((_request, response) => void setTimeout(() => response.end('late'), SLOW_MS));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function context(): ShardingContext {
  return {
    jobName: 'slow',
    taskId: 't',
    shardingTotalCount: 1,
    jobParameter: '',
    shardingItem: 0,
    shardingParameter: undefined,
    attempt: 1,
    signal: new AbortController().signal,
    logger: { log: () => undefined, error: () => undefined, warn: () => undefined },
    reportProgress: () => undefined,
  } as ShardingContext;
}

describe('HTTP items: timeouts', () => {
  it('time out while garbage collections run (a timeout signal inside AbortSignal.any is collectable)', async () => {
    // Node's AbortSignal.timeout holds its signal weakly, and AbortSignal.any does not keep its sources alive
    // (nodejs/node issue 57736): a collection during the request dropped the timeout, and the item succeeded with the
    // late answer (typed-jobs.spec saw it once beside telemetry.spec).
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const executor = new HttpItemExecutor(() => ({
      'http.uri': url,
      'http.method': 'GET',
      'http.connect.timeout.milliseconds': '100',
      'http.read.timeout.milliseconds': '100',
    }));
    const collecting = setInterval(gc, 10);
    try {
      await expect(executor.execute(context())).rejects.toThrow(/timed out after 200 ms/);
    } finally {
      clearInterval(collecting);
    }
  });
});
