import { Logger } from '@nestjs/common';
import { describe, expect, it, vi } from 'vitest';
import { ExecutionEvents, type ExecutionEventMap } from '../../lib/job/events/execution-events.js';

const started: ExecutionEventMap['item-started'] = {
  jobName: 'job',
  instanceId: '10.0.0.1@-@1',
  source: 'CRON',
  taskId: 't',
  shardingItem: 3,
  startTime: new Date(0),
};

/** One turn of the event loop: what was deferred past this instant has run. */
const afterTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('ExecutionEvents', () => {
  it('calls listeners after the emitting code has moved on, and after the timers due with it', async () => {
    const events = new ExecutionEvents(new Logger('test'));
    const heard: string[] = [];
    events.on('item-started', (event) => heard.push(`heard ${event.shardingItem}`));
    // Two jobs' firings due at one instant: the first one's event is heard after the second one's items start.
    setTimeout(() => {
      events.emit('item-started', started);
      heard.push('first job started');
    });
    setTimeout(() => heard.push('second job started'));
    // Both due before the loop's next timers pass, whatever the clock did between the two calls (each takes its own
    // start: under load a millisecond boundary fell between them, the second came one pass later, and a full run saw
    // the event heard before it).
    for (const until = Date.now() + 5; Date.now() < until;);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await afterTurn();
    expect(heard).toEqual(['first job started', 'second job started', 'heard 3']);
  });

  it('a listener that throws or rejects is logged; the others still hear the event and emit never throws', async () => {
    const logger = new Logger('test');
    const warn = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    const events = new ExecutionEvents(logger);
    const heard: string[] = [];
    events.on('item-started', () => {
      throw new Error('sync failure');
    });
    events.on('item-started', () => Promise.reject(new Error('async failure')));
    events.on('item-started', () => heard.push('third'));
    expect(() => events.emit('item-started', started)).not.toThrow();
    await new Promise((resolve) => setImmediate(resolve));
    expect(heard).toEqual(['third']);
    expect(warn.mock.calls.map((call) => String(call[0])).sort()).toEqual([
      "a 'item-started' listener failed: async failure",
      "a 'item-started' listener failed: sync failure",
    ]);
  });

  it('unsubscribes, and hears only the events it subscribed to', async () => {
    const events = new ExecutionEvents(new Logger('test'));
    const heard: string[] = [];
    const off = events.on('item-started', () => heard.push('started'));
    events.on('firing-skipped', (event) => heard.push(`skipped ${event.reason}`));
    events.emit('firing-skipped', { ...started, reason: 'not-connected', items: [] });
    off();
    events.emit('item-started', started);
    await afterTurn();
    expect(heard).toEqual(['skipped not-connected']);
  });

  it('a listener subscribed twice is called once; one unsubscribed during an emit still hears that event', async () => {
    const events = new ExecutionEvents(new Logger('test'));
    const heard: string[] = [];
    const twice = (): number => heard.push('twice');
    events.on('item-started', twice);
    events.on('item-started', twice);
    let offLater: () => void = () => undefined;
    events.on('item-started', () => {
      heard.push('first');
      offLater();
    });
    offLater = events.on('item-started', () => heard.push('later'));
    events.emit('item-started', started);
    await afterTurn();
    events.emit('item-started', started);
    await afterTurn();
    expect(heard).toEqual(['twice', 'first', 'later', 'twice', 'first']);
  });
});
