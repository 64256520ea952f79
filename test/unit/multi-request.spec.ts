import { createRequire } from 'node:module';
import zookeeper from 'node-zookeeper-client';
import { describe, expect, it } from 'vitest';
import { MultiRequest, multiAcl, type MultiOp } from '../../lib/registry/multi-request.js';

interface ClientRecord {
  byteLength(): number;
  serialize(buffer: Buffer, offset: number): number;
  setChrootPath(path: string): void;
}
const jute = createRequire(import.meta.url)('node-zookeeper-client/lib/jute/index.js') as {
  OP_CODES: Record<string, number>;
  TransactionRequest: new (ops: unknown[]) => ClientRecord;
};

/** What node-zookeeper-client's own Transaction would put on the wire for these ops. */
function clientBytes(ops: MultiOp[], acl: { permission: number; scheme: string; id: string }, chroot?: string): Buffer {
  const acls = [new zookeeper.ACL(acl.permission, new zookeeper.Id(acl.scheme, acl.id))];
  const clientOps = ops.map((op) => {
    if (op.op === 'create') return { type: jute.OP_CODES.CREATE, path: op.path, data: op.data, acls, mode: op.flags };
    if (op.op === 'setData')
      return { type: jute.OP_CODES.SET_DATA, path: op.path, data: op.data, version: op.version ?? -1 };
    if (op.op === 'remove') return { type: jute.OP_CODES.DELETE, path: op.path, version: op.version ?? -1 };
    return { type: jute.OP_CODES.CHECK, path: op.path, version: op.version ?? -1 };
  });
  return bytesOf(new jute.TransactionRequest(clientOps), chroot);
}

function bytesOf(record: ClientRecord | MultiRequest, chroot?: string): Buffer {
  if (chroot) record.setChrootPath(chroot);
  const buffer = Buffer.alloc(record.byteLength());
  expect(record.serialize(buffer, 0)).toBe(buffer.length);
  return buffer;
}

describe('MultiRequest (the library writes ZooKeeper multi requests itself)', () => {
  const ops: MultiOp[] = [
    { op: 'check', path: '/ns/job' },
    { op: 'remove', path: '/ns/job/sharding/0/running' },
    { op: 'create', path: '/ns/job/sharding/0/running', data: Buffer.from('10.0.0.1@-@4242'), flags: 1 },
    { op: 'create', path: '/ns/job/é/ünïcode', data: Buffer.alloc(0), flags: 0 },
    { op: 'setData', path: '/ns/job/config', data: Buffer.from('cron: 0/5 * * * * ?\n') },
    // Versions (not 0: the client's own encoder turns 0 into "any", its bug #67)
    { op: 'setData', path: '/ns/job/sharding/1/running', data: Buffer.from('me'), version: 3 },
    { op: 'remove', path: '/ns/job/sharding/2/running', version: 7 },
    { op: 'check', path: '/ns/job', version: 12 },
  ];

  it('puts on the wire exactly the bytes of the client own Transaction, for every op kind and ACL', () => {
    for (const acl of [
      { permission: zookeeper.Permission.ALL, scheme: 'world', id: 'anyone' },
      { permission: zookeeper.Permission.ALL, scheme: 'auth', id: '' },
    ]) {
      expect(bytesOf(new MultiRequest(ops, multiAcl([acl])))).toEqual(clientBytes(ops, acl));
    }
  });

  it('prefixes every path with the connection string chroot, as the client does', () => {
    const acl = { permission: zookeeper.Permission.ALL, scheme: 'world', id: 'anyone' };
    const withRoot: MultiOp[] = [{ op: 'check', path: '/' }, ...ops];
    expect(bytesOf(new MultiRequest(withRoot, multiAcl([acl])), '/chroot')).toEqual(
      clientBytes(withRoot, acl, '/chroot'),
    );
  });
});
