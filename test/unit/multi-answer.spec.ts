import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import type { Jute } from '../../lib/registry/client-internals.js';
import { installLeanMultiAnswers } from '../../lib/registry/multi-answer.js';

/**
 * A copy of the client's jute module of this file's own: a test file that ran before this one in the same worker
 * (vitest.config.mts: `isolate: false`) may have connected a client, which installs the lean reader on the module
 * every other importer shares.
 */
function freshJute(): Jute & { OP_CODES: Record<string, number> } {
  const require = createRequire(import.meta.url);
  const path = require.resolve('node-zookeeper-client/lib/jute/index.js');
  const shared = require.cache[path];
  delete require.cache[path];
  try {
    return require(path) as Jute & { OP_CODES: Record<string, number> };
  } finally {
    if (shared) require.cache[path] = shared;
  }
}

const jute = freshJute();
// The client's own reader, taken before the lean one replaces it.
const clientReader = jute.TransactionResponse.prototype.deserialize;

const int = (value: number): Buffer => {
  const buffer = Buffer.alloc(4);
  buffer.writeInt32BE(value);
  return buffer;
};
const header = (type: number, done: boolean, err: number): Buffer =>
  Buffer.concat([int(type), Buffer.from([done ? 1 : 0]), int(err)]);
const ustring = (text: string | undefined): Buffer =>
  text === undefined ? int(-1) : Buffer.concat([int(Buffer.byteLength(text)), Buffer.from(text, 'utf8')]);

/** A multi answer of every kind of result, then bytes that are not the answer's. */
function answer(): Buffer {
  const { CREATE, DELETE, CHECK, ERROR, SET_DATA } = jute.OP_CODES;
  const stat = Buffer.alloc(68);
  for (let i = 0; i < stat.length; i++) stat[i] = (i * 7) & 0xff;
  return Buffer.concat([
    header(CREATE!, false, 0),
    ustring('/chroot/job/sharding/0/running'),
    header(CREATE!, false, 0),
    ustring('/chroot'),
    header(CREATE!, false, 0),
    ustring('/chroot/é-ü'),
    header(DELETE!, false, 0),
    header(CHECK!, false, 0),
    header(SET_DATA!, false, 0),
    stat,
    header(ERROR!, false, -101),
    int(-101),
    header(ERROR!, false, 0),
    int(0),
    header(-1, true, -1),
    Buffer.from('not the answer'),
  ]);
}

function read(
  reader: typeof clientReader,
  chroot: string | undefined,
  buffer: Buffer,
): { bytes: number; results: unknown } {
  const response = new jute.TransactionResponse();
  if (chroot) response.setChrootPath(chroot);
  const bytes = (reader as (this: unknown, buffer: Buffer, offset: number) => number).call(response, buffer, 3);
  return { bytes, results: response.results };
}

describe("a multi answer's reader", () => {
  it('reads what the client reads, byte for byte and result for result, with and without a chroot', () => {
    installLeanMultiAnswers(jute);
    const lean = jute.TransactionResponse.prototype.deserialize;
    expect(lean).not.toBe(clientReader);
    const buffer = Buffer.concat([Buffer.from([9, 9, 9]), answer()]); // read from offset 3
    for (const chroot of [undefined, '/chroot']) {
      const theirs = read(clientReader, chroot, buffer);
      const ours = read(lean, chroot, buffer);
      expect(ours).toEqual(theirs);
      expect(ours.bytes).toBe(buffer.length - 3 - 'not the answer'.length);
    }
    expect(read(lean, '/chroot', buffer).results).toEqual(
      expect.arrayContaining([{ type: jute.OP_CODES.CREATE, path: '/job/sharding/0/running' }]),
    );
  });

  it('is installed once (a second client does not wrap it again)', () => {
    installLeanMultiAnswers(jute);
    const once = jute.TransactionResponse.prototype.deserialize;
    installLeanMultiAnswers(jute);
    expect(jute.TransactionResponse.prototype.deserialize).toBe(once);
  });
});
