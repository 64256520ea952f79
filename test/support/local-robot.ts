import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST a robot received, its JSON body parsed, and what the robot made of it. */
export interface RobotRequest {
  path: string;
  query: Record<string, string>;
  contentType: string | undefined;
  body: unknown;
  /** DingTalk: the signature checked as its robot checks it (true, false, or undefined when unsigned). */
  signed?: boolean;
}

export interface LocalRobot {
  base: string;
  requests: RobotRequest[];
  /** Requests held without an answer (`/hang`). */
  hanging: number;
  close(): Promise<void>;
}

/**
 * A local HTTP server (node:http on a free loopback port) answering as the robots do:
 * - `/robot/send` as DingTalk's custom robot: a `timestamp` and `sign` in the query are checked against `secret`
 *   (HMAC-SHA256 of "timestamp\nsecret", base64; DingTalk refuses a timestamp more than an hour away), errcode 0 or
 *   310000 "sign not match";
 * - `/cgi-bin/webhook/send` as WeCom's group robot: a `key` required, errcode 0 or 93000;
 * - `/hooks/...` as Slack's incoming webhook: `ok`; `/down`: HTTP 500; `/hang`: never answered;
 * - `/broken`: HTTP 503 (the failing item of an HTTP job).
 */
export async function startRobot(secret = ''): Promise<LocalRobot> {
  const requests: RobotRequest[] = [];
  const held = new Set<import('node:http').ServerResponse>();
  const server: Server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => {
      const url = new URL(request.url!, 'http://robot');
      const query = Object.fromEntries(url.searchParams);
      if (url.pathname === '/broken') {
        response.statusCode = 503;
        return void response.end('warehouse down');
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      const record: RobotRequest = { path: url.pathname, query, contentType: request.headers['content-type'], body };
      requests.push(record);
      const json = (answer: unknown): void => {
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify(answer));
      };
      if (url.pathname === '/hang') {
        // Held until the client gives up (its timeout, or the job's stop) or the robot closes.
        response.on('close', () => held.delete(response));
        return void held.add(response);
      }
      if (url.pathname === '/down') {
        response.statusCode = 500;
        return void response.end('internal error');
      }
      if (url.pathname === '/robot/send') {
        if (query.timestamp !== undefined) {
          const expected = createHmac('sha256', secret).update(`${query.timestamp}\n${secret}`).digest('base64');
          record.signed = query.sign === expected && Math.abs(Date.now() - Number(query.timestamp)) < 3_600_000;
        }
        return json(
          record.signed === false ? { errcode: 310000, errmsg: 'sign not match' } : { errcode: 0, errmsg: 'ok' },
        );
      }
      if (url.pathname === '/cgi-bin/webhook/send')
        return json(query.key ? { errcode: 0, errmsg: 'ok' } : { errcode: 93000, errmsg: 'invalid webhook url' });
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    get hanging() {
      return held.size;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
