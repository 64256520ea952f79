import zookeeper from 'node-zookeeper-client';
import { assertClientShape } from '../../lib/registry/zookeeper-client.adapter.js';
import { describe, expect, it } from 'vitest';
import { AnswerQueue, FrameReader } from '../../lib/registry/client-io.js';

const frame = (body: string): Buffer => {
  const bytes = Buffer.from(body);
  const out = Buffer.alloc(4 + bytes.length);
  out.writeInt32BE(bytes.length, 0);
  bytes.copy(out, 4);
  return out;
};

describe('FrameReader (ZooKeeper framing ahead of node-zookeeper-client)', () => {
  it('hands over every whole frame of a chunk, one by one, and keeps a split frame until it is complete', () => {
    const reader = new FrameReader(undefined);
    const stream = Buffer.concat([frame('a'), frame('bb'), frame('ccc'), frame(''), frame('dddd')]);
    const seen: string[] = [];
    // Every split point, including inside a length prefix.
    for (const cut of [1, 3, 5, 9, 14, 20]) {
      seen.length = 0;
      for (const chunk of [stream.subarray(0, cut), stream.subarray(cut, cut + 2), stream.subarray(cut + 2)]) {
        for (const f of reader.push(chunk)) seen.push(f.subarray(4).toString());
      }
      expect(seen, `cut at ${cut}`).toEqual(['a', 'bb', 'ccc', '', 'dddd']);
    }
  });

  it('passes frames as they are, length prefix included', () => {
    const reader = new FrameReader(undefined);
    const frames = [...reader.push(Buffer.concat([frame('xyz'), frame('q')]))];
    expect(frames.map((f) => f.toString('hex'))).toEqual([frame('xyz').toString('hex'), frame('q').toString('hex')]);
  });
});

describe('the client shapes this library relies on', () => {
  it('are all there on the pinned node-zookeeper-client, and a missing one is named', () => {
    const client = zookeeper.createClient('127.0.0.1:1');
    expect(() => assertClientShape(client)).not.toThrow();
    const manager = (client as unknown as { connectionManager: Record<string, unknown> }).connectionManager;
    manager.onSocketData = undefined;
    manager.watcherManager = {};
    // (never connected: nothing to close)
    expect(() => assertClientShape(client)).toThrow(
      /connectionManager\.watcherManager\.emit\(\), connectionManager\.onSocketData\(\)\. Install the version pinned/,
    );
  });
});

describe('AnswerQueue', () => {
  it('is first in, first out across compactions, like the array it replaces', () => {
    const queue = new AnswerQueue<number>();
    const reference: number[] = [];
    let next = 0;
    // Interleaved pushes and shifts, long enough to compact several times.
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 300; i++) {
        queue.push(next);
        reference.push(next++);
      }
      for (let i = 0; i < 200 + (round % 3) * 60; i++) expect(queue.shift()).toBe(reference.shift());
      expect(queue.length).toBe(reference.length);
    }
    while (reference.length > 0) expect(queue.shift()).toBe(reference.shift());
    expect(queue.shift()).toBeUndefined();
    expect(queue.length).toBe(0);
  });
});
