import { Logger } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import type { ElasticJobEvent, ElasticJobEventType } from '../../lib/events/elastic-job-event.types.js';
import { ExecutionEvents } from '../../lib/job/events/execution-events.js';
import { JobEventPublisher } from '../../lib/job/events/job-event-publisher.js';

const INSTANCE = '10.0.0.1@-@1';
const afterTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A sink that hears only `types`, as the module's bus with only the execution log subscribed. */
function sinkHearing(types: readonly ElasticJobEventType[]): { published: ElasticJobEvent[]; sink: JobEventSinkLike } {
  const published: ElasticJobEvent[] = [];
  return {
    published,
    sink: { publish: (event) => void published.push(event), observes: (type) => types.includes(type) },
  };
}
type JobEventSinkLike = ConstructorParameters<typeof JobEventPublisher>[0] & object;

/** One firing of items 0 and 1 (item 1 failing), told as the executor tells it. */
async function fire(sink: JobEventSinkLike): Promise<void> {
  const events = new ExecutionEvents(new Logger('test'));
  new JobEventPublisher(sink, { jobName: 'job', instanceId: INSTANCE, ip: '10.0.0.1' }).follow(events);
  const base = { jobName: 'job', instanceId: INSTANCE, source: 'CRON' as const, taskId: 't' };
  const startTime = new Date();
  events.emit('firing-started', { ...base, items: [0, 1], startTime });
  for (const item of [0, 1]) events.emit('item-started', { ...base, shardingItem: item, startTime });
  for (const item of [0, 1])
    events.emit('item-completed', {
      ...base,
      shardingItem: item,
      startTime,
      completeTime: new Date(),
      success: item === 0,
      ...(item === 1 ? { failureCause: new Error('item 1 failed') } : {}),
    });
  events.emit('firing-completed', { ...base, items: [0, 1], startTime, completeTime: new Date(), success: false });
  await afterTurn();
}

describe('JobEventPublisher', () => {
  it('builds only the events somebody hears: the execution log alone gets item events, no status events', async () => {
    const { published, sink } = sinkHearing(['item.started', 'item.completed']);
    await fire(sink);
    expect(published.map((event) => event.type)).toEqual([
      'item.started',
      'item.started',
      'item.completed',
      'item.completed',
    ]);
    // A start and its completion share their id.
    const ids = published.map((event) => (event as { id: string }).id);
    expect(ids[0]).toBe(ids[2]);
    expect(ids[1]).toBe(ids[3]);
  });

  it("status events alone: the failure still reaches the firing's TASK_ERROR", async () => {
    const { published, sink } = sinkHearing(['status']);
    await fire(sink);
    const states = published.map((event) => (event.type === 'status' ? event.state : event.type));
    expect(states).toEqual(['TASK_STAGING', 'TASK_RUNNING', 'TASK_ERROR']);
    expect(published.at(-1)).toMatchObject({ message: expect.stringContaining('1=Error: item 1 failed') });
  });
});
