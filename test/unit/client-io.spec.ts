import zookeeper from 'node-zookeeper-client';
import { assertClientShape } from '../../lib/registry/zookeeper-client.adapter.js';
import { describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { AnswerQueue, FrameReader, readNotification } from '../../lib/registry/client-io.js';

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
      'connectionManager.watcherManager.emit(), connectionManager.watcherManager: register{Data,Child,Existence}' +
        'Watcher() and their {data,child,existence}Watchers, connectionManager.onSocketData(). Install the version ' +
        'pinned',
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

describe('watch notifications read straight from the frame (readNotification)', () => {
  // The client's own records, to read the same frames the way it does.
  const jute = createRequire(import.meta.url)('node-zookeeper-client/lib/jute/index.js') as {
    protocol: Record<
      string,
      new () => { deserialize(buffer: Buffer, offset: number): number; setChrootPath(path: string): void } & Record<
        string,
        unknown
      >
    >;
  };
  const frameOf = (xid: number, type: number, path: string | null): Buffer => {
    const bytes = path === null ? Buffer.alloc(0) : Buffer.from(path, 'utf8');
    const built = Buffer.alloc(32 + bytes.length);
    built.writeInt32BE(built.length - 4, 0);
    built.writeInt32BE(xid, 4);
    built.writeBigInt64BE(-1n, 8);
    built.writeInt32BE(0, 16);
    built.writeInt32BE(type, 20);
    built.writeInt32BE(3, 24); // SyncConnected
    built.writeInt32BE(path === null ? -1 : bytes.length, 28);
    bytes.copy(built, 32);
    return built;
  };
  const asTheClientReadsIt = (bytes: Buffer, chroot: string | undefined): { type: unknown; path: unknown } => {
    const header = new jute.protocol.ReplyHeader!();
    const event = new jute.protocol.WatcherEvent!();
    if (chroot) event.setChrootPath(chroot);
    event.deserialize(bytes, 4 + header.deserialize(bytes, 4));
    return { type: event.type, path: event.path };
  };

  it.each([
    [1, '/ns/job/instances/10.0.0.1@-@1', undefined],
    [2, '/ns/job', undefined],
    [3, '/ns/jöb/config', undefined],
    [4, '/chroot/ns/job/sharding', '/chroot'],
    [1, '/chroot', '/chroot'],
  ])('type %i on %s (chroot %s): what the client reads', (type, path, chroot) => {
    const notification = frameOf(-1, type, path);
    expect(readNotification(notification, chroot)).toEqual(asTheClientReadsIt(notification, chroot));
  });

  it('leaves answers, other event types and pathless events to the client', () => {
    expect(readNotification(frameOf(7, 1, '/a'), undefined)).toBeUndefined(); // an answer
    expect(readNotification(frameOf(-2, 1, '/a'), undefined)).toBeUndefined(); // a ping
    expect(readNotification(frameOf(-1, -1, '/a'), undefined)).toBeUndefined(); // type None
    expect(readNotification(frameOf(-1, 5, '/a'), undefined)).toBeUndefined(); // watch removed
    expect(readNotification(frameOf(-1, 1, null), undefined)).toBeUndefined();
    expect(readNotification(frameOf(-1, 1, '/a').subarray(0, 30), undefined)).toBeUndefined();
  });
});
