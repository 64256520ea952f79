import { describe, expect, it } from 'vitest';
import { servedByLastStart } from '../../lib/job/executor/rerun-order.js';
import { ZxidWatermark } from '../../lib/registry/zxid-watermark.js';

/** A reply header frame as ZooKeeper sends it: `int length; int xid; long zxid; int err`. */
function frame(zxid: bigint, xid = 7): Buffer {
  const buffer = Buffer.alloc(20);
  buffer.writeInt32BE(16, 0);
  buffer.writeInt32BE(xid, 4);
  buffer.writeBigInt64BE(zxid, 8);
  return buffer;
}

describe('ZxidWatermark', () => {
  it('keeps the highest zxid of every frame read, answers and node events alike, across the 32-bit halves', () => {
    const watermark = new ZxidWatermark();
    expect(watermark.value()).toBe(0n);
    watermark.see(frame(0x1_0000_0005n));
    watermark.see(frame(0x0_ffff_ffffn)); // lower high half: ignored
    expect(watermark.value()).toBe(0x1_0000_0005n);
    watermark.see(frame(0x1_0000_0009n, -1)); // a notification
    expect(watermark.value()).toBe(0x1_0000_0009n);
    watermark.see(frame(-1n)); // a frame with no zxid of its own
    watermark.see(Buffer.alloc(8)); // too short to hold one
    expect(watermark.value()).toBe(0x1_0000_0009n);
  });
});

describe('servedByLastStart (a rerun against the last firing, in ZooKeeper order)', () => {
  const last = { items: [0, 2], zxid: 500n };

  it('serves the items the last firing started after the rerun was written', () => {
    // The hand-over's rerun (zxid 480) was written before the resharding the firing started its items on (500).
    expect(servedByLastStart([0, 1], 480n, last)).toEqual([0]);
    expect(servedByLastStart([0, 2], 500n, last)).toEqual([0, 2]);
  });

  it('serves nothing asked after the firing started, nor without a zxid or a firing', () => {
    // An operator's rerun of an item that was running when asked: it runs again.
    expect(servedByLastStart([0], 501n, last)).toEqual([]);
    expect(servedByLastStart([0], undefined, last)).toEqual([]);
    expect(servedByLastStart([0], 480n, undefined)).toEqual([]);
  });
});
