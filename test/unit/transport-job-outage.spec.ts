import { Logger } from '@nestjs/common';
import type { ClientProxy } from '@nestjs/microservices';
import { NEVER, Observable, of, throwError } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DependencyUnavailableError } from '../../lib/errors/elastic-job.errors.js';
import type { ShardingContext } from '../../lib/interfaces/sharding-context.interface.js';
import { transportJob } from '../../lib/microservices/index.js';

/**
 * How a transport job tells its client's outage from an item's failure (issue 27), against a client whose answers
 * are scripted per pattern as Nest's clients give them: the text Nest's NATS, Redis, MQTT and RMQ clients reject with
 * on a lost connection, a worker's RpcException payload (a plain object), no reply in time, a reply.
 */

const LOST = 'Error: Connection lost. Trying to reconnect...';

type Answer = () => Observable<unknown>;

function runner(jobName: string, pattern: string, proxy: ClientProxy) {
  const Provider = transportJob({
    jobName,
    cron: '0 0 0 1 1 *',
    shardingTotalCount: 1,
    client: 'WORKERS',
    pattern,
    timeoutMilliseconds: 20,
  }) as unknown as new (proxy: ClientProxy) => { run(context: ShardingContext): Promise<unknown> };
  const provider = new Provider(proxy);
  return (item = 0): Promise<unknown> =>
    provider.run({ shardingItem: item, signal: new AbortController().signal } as unknown as ShardingContext);
}

async function failure(run: Promise<unknown>): Promise<unknown> {
  try {
    return { resolved: await run };
  } catch (error) {
    return error;
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a transport job under a transport outage', () => {
  it("logs its pattern's outage once each way; a slow worker, another pattern's replies and a worker's error are not an outage", async () => {
    const warnings = vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const logs = vi.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const lines = () => [
      ...warnings.mock.calls.map((call) => `WARN ${String(call[0])}`),
      ...logs.mock.calls.map((call) => `LOG ${String(call[0])}`),
    ];
    const answers: Record<string, Answer> = {
      'report.build': () => throwError(() => LOST),
      'mail.send': () => of('sent'),
    };
    const proxy = { send: (pattern: string) => answers[pattern]!() } as unknown as ClientProxy;
    const report = runner('report', 'report.build', proxy);
    const mail = runner('mail', 'mail.send', proxy);

    // The broker away: each item fails as a DependencyUnavailableError, and one line says so.
    for (let item = 0; item < 3; item++) {
      const error = await failure(report(item));
      expect(error).toBeInstanceOf(DependencyUnavailableError);
      expect((error as Error).message).toBe(`'report.build' for item ${item} failed in the transport: connection lost`);
    }
    expect(lines()).toEqual([
      "WARN 'report.build' through client 'WORKERS' is unavailable: connection lost; its items fail until it answers; " +
        'each is reported as an item event (failures are counted until it answers again)',
    ]);

    // Another pattern answered: that says nothing of report.build's workers.
    expect(await mail()).toBe('sent');
    // No reply in time is the item's failure, an Error of its own, not the transport's.
    answers['report.build'] = () => NEVER;
    const late = await failure(report(3));
    expect(late).not.toBeInstanceOf(DependencyUnavailableError);
    expect((late as Error).message).toBe("no reply to 'report.build' for item 3 in 20 ms");
    expect(lines()).toHaveLength(1);

    // A worker answered, if only with its error: the outage is over, and the item failed as the worker said.
    answers['report.build'] = () => throwError(() => ({ status: 'error', message: 'no data for ap' }));
    const refused = await failure(report(4));
    expect(refused).not.toBeInstanceOf(DependencyUnavailableError);
    expect((refused as Error).message).toBe("'report.build' for item 4 failed: no data for ap");
    expect(lines().slice(1)).toEqual([
      expect.stringMatching(
        /^LOG 'report\.build' through client 'WORKERS' is available again after [\d.]+ s: 3 item\(s\) failed while it was away$/,
      ),
    ]);
  });
});
