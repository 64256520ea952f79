import type { ZookeeperConfiguration } from '../interfaces/module-options.interface.js';
import { ZookeeperRegistryCenter } from '../registry/zookeeper-registry-center.js';

/**
 * A session of the CLI's own. Rejects, with what to check, when ZooKeeper does not answer within the connection
 * timeout: the client would otherwise go on trying forever, and the command would hang.
 */
export function connectRegistry(zookeeper: ZookeeperConfiguration): Promise<ZookeeperRegistryCenter> {
  return ZookeeperRegistryCenter.open(
    zookeeper,
    'check --zk (or ZK_CONNECT) and that ZooKeeper runs there; --timeout MS waits longer',
  );
}
