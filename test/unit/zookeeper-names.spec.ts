import { describe, expect, it } from 'vitest';
import { parseServerLists } from '../../lib/registry/zookeeper-names.js';

describe('parseServerLists (as node-zookeeper-client reads a connection string)', () => {
  it('reads hosts and a chroot', () => {
    expect(parseServerLists('a:2181,b:2182/apps/jobs')).toEqual({
      servers: [
        { host: 'a', port: 2181 },
        { host: 'b', port: 2182 },
      ],
      chroot: '/apps/jobs',
    });
  });

  it("takes a lone trailing '/' as no chroot, as the client does", () => {
    expect(parseServerLists('a:2181/')).toEqual({ servers: [{ host: 'a', port: 2181 }], chroot: '' });
  });

  it('refuses a chroot that is not a ZooKeeper path', () => {
    expect(parseServerLists('a:2181/apps//jobs')).toMatch(/the chroot '\/apps\/\/jobs' is not a ZooKeeper path/);
  });
});
