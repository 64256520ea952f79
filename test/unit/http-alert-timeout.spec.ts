import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendWebhook } from '../../lib/job/alerts/http-alerts.js';

// A real loopback receiver that answers its headers at once and then never finishes the body.
let server: Server;
let url = '';
const sockets: Socket[] = [];

beforeAll(async () => {
  server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.write('half an answer');
  });
  server.on('connection', (socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('HTTP alerts: an answer whose body never ends', () => {
  it('fails after the read timeout and closes the connection (not left to the receiver)', async () => {
    const props = {
      'webhook.url': url,
      'webhook.connectTimeoutMilliseconds': '5000',
      'webhook.readTimeoutMilliseconds': '100',
    };
    const delivery = sendWebhook(
      { jobName: 'job', text: 'failed' },
      props,
      { shardingItem: 0, taskId: 't' },
      new AbortController().signal,
    );
    await expect(delivery).rejects.toThrow(/reading the answer of http:\/\/127\.0\.0\.1:\d+ timed out after 100 ms/);
    // The client's side of the socket is closed: the receiver sees it end, however long it would have held it.
    const socket = sockets.at(-1)!;
    if (!socket.closed) await new Promise((resolve) => socket.once('close', resolve));
    expect(socket.closed).toBe(true);
  });
});
