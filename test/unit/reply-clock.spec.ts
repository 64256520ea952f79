import { afterEach, describe, expect, it, vi } from 'vitest';
import { ReplyClock } from '../../lib/registry/reply-clock.js';

/** A reply header frame as ZooKeeper sends it: `int length; int xid; long zxid; int err`. */
function frame(xid: number): Buffer {
  const buffer = Buffer.alloc(20);
  buffer.writeInt32BE(16, 0);
  buffer.writeInt32BE(xid, 4);
  buffer.writeBigInt64BE(42n, 8);
  return buffer;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('ReplyClock (what a lost session is counted from)', () => {
  it('moves on answers to requests and pings, never on node events', () => {
    vi.useFakeTimers({ now: 1_000 });
    const clock = new ReplyClock();
    clock.reset(1_000);
    vi.setSystemTime(1_400);
    clock.see(frame(-2)); // a ping's answer
    expect(clock.lastReplyAt).toBe(1_400);
    vi.setSystemTime(1_900);
    clock.see(frame(-1)); // a node event: the server may not have heard from us since the ping
    clock.see(Buffer.alloc(6)); // too short to say
    expect(clock.lastReplyAt).toBe(1_400);
    vi.setSystemTime(2_300);
    clock.see(frame(17)); // a request's answer
    expect(clock.lastReplyAt).toBe(2_300);
  });
});
