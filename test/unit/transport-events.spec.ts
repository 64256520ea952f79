import type { ClientProxy } from '@nestjs/microservices';
import { of, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ElasticJobRegistry } from '../../lib/elastic-job.registry.js';
import type { ElasticJobEvent } from '../../lib/events/elastic-job-event.types.js';
import { ElasticJobTransportEvents } from '../../lib/microservices/index.js';

/**
 * The transport events' sending loop against a client whose emit completes within microtasks (as NATS's does): an
 * event that arrives at any moment of the loop's ending is still sent, in order.
 */

const event = (jobName: string): ElasticJobEvent => ({
  type: 'session.lost',
  jobName,
  instanceId: '10.0.0.1@-@1',
  at: new Date(0),
});

describe('transport events sending loop', () => {
  it('never strands an event queued while the loop ends', async () => {
    for (let gap = 0; gap < 12; gap++) {
      const events$ = new Subject<ElasticJobEvent>();
      const sent: string[] = [];
      const client = {
        emit: (_pattern: string, payload: ElasticJobEvent) => {
          sent.push(payload.jobName);
          return of(undefined);
        },
      } as unknown as ClientProxy;
      const jobs = { enabled: true, events$ } as unknown as ElasticJobRegistry;
      const transport = new ElasticJobTransportEvents(jobs, client, { client: 'EVENTS' });
      transport.onModuleInit();
      events$.next(event('first'));
      for (let tick = 0; tick < gap; tick++) await Promise.resolve();
      events$.next(event('second'));
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect([gap, sent]).toEqual([gap, ['first', 'second']]);
      expect(transport.stats).toEqual({ sent: 2, dropped: 0, buffered: 0 });
      transport.onApplicationShutdown();
    }
  });
});
