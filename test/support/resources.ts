import type { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import { TcpProxy } from '../../tools/zookeeper/tcp-proxy.js';
import { startRegistry, zkConnect } from './zk.js';

/** Things a test started, undone in reverse order by `releaseAll()` (each spec file calls it in afterEach). */
const held: Array<() => Promise<unknown> | unknown> = [];

export function hold(release: () => Promise<unknown> | unknown): void {
  held.push(release);
}

export async function releaseAll(): Promise<void> {
  while (held.length) await held.pop()?.();
}

/** A separate session on the test's namespace, to look at (and tamper with) the tree as an operator would. */
export async function observer(namespace: string, serverLists = zkConnect()): Promise<ZookeeperRegistryCenter> {
  const zk = await startRegistry({ namespace, serverLists });
  hold(() => zk.close());
  return zk;
}

/** A loopback proxy in front of the (first) ZooKeeper server of `connect`. */
export async function proxyTo(connect = zkConnect()): Promise<TcpProxy> {
  const [host, port] = connect.split(',')[0]!.split(':');
  const proxy = new TcpProxy(Number(port), host);
  await proxy.start();
  hold(() => proxy.stop());
  return proxy;
}
