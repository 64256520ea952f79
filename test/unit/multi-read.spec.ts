import juteModule from 'node-zookeeper-client/lib/jute/index.js';
import { describe, expect, it } from 'vitest';
import type { Jute } from '../../lib/registry/client-internals.js';
import { installLeanMultiAnswers, type TransactionResponseState } from '../../lib/registry/multi-answer.js';
import { answersOf, MultiReadRequest, readMultiReadAnswer } from '../../lib/registry/multi-read.js';
import type { ReadRequest } from '../../lib/registry/registry.types.js';

/** The client's own records, to check our bytes against an encoder we did not write. */
interface JuteRecordClass {
  new (): { byteLength(): number; serialize(buffer: Buffer, offset: number): number } & Record<string, unknown>;
}
const jute = juteModule as unknown as Jute & { protocol: Record<string, JuteRecordClass> };

const int = (value: number): Buffer => {
  const buffer = Buffer.alloc(4);
  buffer.writeInt32BE(value);
  return buffer;
};
const header = (type: number, done: boolean, err: number): Buffer =>
  Buffer.concat([int(type), Buffer.from([done ? 1 : 0]), int(err)]);
const ustring = (text: string): Buffer => Buffer.concat([int(Buffer.byteLength(text)), Buffer.from(text, 'utf8')]);
const long = (value: bigint): Buffer => {
  const buffer = Buffer.alloc(8);
  buffer.writeBigInt64BE(value);
  return buffer;
};
/** A jute Stat (zookeeper.jute): czxid, mzxid, ctime, mtime, version, cversion, aversion, ephemeralOwner, dataLength, numChildren, pzxid. */
const stat = (fields: {
  mzxid: bigint;
  mtime: bigint;
  version: number;
  cversion: number;
  owner: bigint;
  children: number;
}) =>
  Buffer.concat([
    long(1n),
    long(fields.mzxid),
    long(2n),
    long(fields.mtime),
    int(fields.version),
    int(fields.cversion),
    int(0),
    long(fields.owner),
    int(5),
    int(fields.children),
    long(3n),
  ]);

function record(name: string, fields: Record<string, unknown>): Buffer {
  const value = new jute.protocol[name]!();
  Object.assign(value, fields);
  const buffer = Buffer.alloc(value.byteLength());
  value.serialize(buffer, 0);
  return buffer;
}

const reads: ReadRequest[] = [
  { path: '/ns/job/config', what: 'data' },
  { path: '/ns/job', what: 'children' },
  { path: '/ns/job/missing', what: 'data' },
];

describe('multiRead request (MultiOperationRecord of getData and getChildren ops)', () => {
  it('writes a MultiHeader and a path-and-watch record per op, then the end header', () => {
    const request = new MultiReadRequest(reads);
    const buffer = Buffer.alloc(request.byteLength());
    expect(request.serialize(buffer, 0)).toBe(buffer.length);
    // The client's own MultiHeader and GetDataRequest records for the data reads (it has no GetChildrenRequest:
    // the same two fields, ustring path and boolean watch, written by hand).
    const getData = (path: string): Buffer =>
      Buffer.concat([
        record('MultiHeader', { type: 4, done: false, err: -1 }),
        record('GetDataRequest', { path, watch: false }),
      ]);
    const expected = Buffer.concat([
      getData('/ns/job/config'),
      header(8, false, -1),
      ustring('/ns/job'),
      Buffer.from([0]),
      getData('/ns/job/missing'),
      header(-1, true, -1),
    ]);
    expect(buffer.equals(expected)).toBe(true);
  });

  it('puts the chroot before every path, and UTF-8 lengths in bytes', () => {
    const request = new MultiReadRequest([{ path: '/é', what: 'children' }]);
    request.setChrootPath('/root');
    const buffer = Buffer.alloc(request.byteLength());
    request.serialize(buffer, 0);
    expect(
      buffer.equals(Buffer.concat([header(8, false, -1), ustring('/root/é'), Buffer.from([0]), header(-1, true, -1)])),
    ).toBe(true);
  });
});

/** A MultiResponse of the reads above: the data and stat, the children, NO_NODE; then bytes not of the answer. */
function answer(): Buffer {
  return Buffer.concat([
    header(4, false, 0),
    ustring('{"cron":"0/5 * * * * ?"}'),
    stat({
      mzxid: 0x1234_5678_9abcn,
      mtime: 1_764_000_000_123n,
      version: 7,
      cversion: 2,
      owner: 0xabcdefn,
      children: 0,
    }),
    header(8, false, 0),
    int(3),
    ustring('config'),
    ustring('sharding'),
    ustring('ü'),
    header(-1, false, -101),
    int(-101),
    header(-1, true, -1),
    Buffer.from('trailing'),
  ]);
}

describe('multiRead answer (MultiResponse of GetDataResponse, GetChildrenResponse, ErrorResponse)', () => {
  const expectedAnswers = [
    {
      data: Buffer.from('{"cron":"0/5 * * * * ?"}'),
      stat: {
        mzxid: 0x1234_5678_9abcn,
        mtime: 1_764_000_000_123,
        version: 7,
        cversion: 2,
        numChildren: 0,
        ephemeralOwner: '0000000000abcdef',
      },
    },
    ['config', 'sharding', 'ü'],
    undefined,
  ];

  it('reads each op answer on its own: data and stat, children, a missing node as undefined', () => {
    const results = readMultiReadAnswer(answer());
    expect(results.map((result) => result.type)).toEqual([4, 8, -1]);
    expect(answersOf(reads, results, () => expect.fail('no op failed'))).toEqual(expectedAnswers);
  });

  it('is read the same through the lean multi reader the client calls for the answer', () => {
    // On a subclass: the client's own prototype stays as it is for the files that run after this one in the worker
    // (multi-answer.spec.ts compares the client's reader with the lean one).
    const TransactionResponse = class extends jute.TransactionResponse {};
    installLeanMultiAnswers({ ...jute, TransactionResponse } as Jute);
    expect(TransactionResponse.prototype.deserialize).not.toBe(jute.TransactionResponse.prototype.deserialize);
    const response = new TransactionResponse() as unknown as TransactionResponseState & {
      deserialize(buffer: Buffer, offset: number): number;
    };
    const bytes = answer();
    const read = response.deserialize(bytes, 0);
    expect(read).toBe(bytes.length - 'trailing'.length);
    expect(answersOf(reads, response.results as never, () => expect.fail('no op failed'))).toEqual(expectedAnswers);
  });

  it('hands an op error other than a missing node to the caller, and refuses an answer of the wrong shape', () => {
    const noAuth = Buffer.concat([header(-1, false, -102), int(-102), header(-1, true, -1)]);
    const failed: Array<[string, number]> = [];
    expect(() =>
      answersOf([reads[0]!], readMultiReadAnswer(noAuth), (read, code) => {
        failed.push([read.path, code]);
        throw new Error('refused');
      }),
    ).toThrow('refused');
    expect(failed).toEqual([['/ns/job/config', -102]]);
    const children = Buffer.concat([header(8, false, 0), int(0), header(-1, true, -1)]);
    expect(() => answersOf([reads[0]!], readMultiReadAnswer(children), () => expect.fail())).toThrow(/op type 8/);
    expect(() => answersOf(reads, readMultiReadAnswer(children), () => expect.fail())).toThrow(/1 results/);
  });
});
