import { ElasticJobError } from '../errors/elastic-job.errors.js';
import type { ZookeeperConfiguration } from '../interfaces/module-options.interface.js';
import { ZookeeperRegistryCenter } from '../registry/zookeeper-registry-center.js';

/**
 * A session of the CLI's own. Rejects, with what to check, when ZooKeeper does not answer within the connection
 * timeout: the client would otherwise go on trying forever, and the command would hang.
 */
export async function connectRegistry(zookeeper: ZookeeperConfiguration): Promise<ZookeeperRegistryCenter> {
  const registry = new ZookeeperRegistryCenter(zookeeper);
  try {
    if (await registry.start()) return registry;
  } catch (error) {
    await registry.close();
    throw error;
  }
  // Not awaited: a client that never connected waits 2 s for a disconnection that never comes; the process exits.
  void registry.close();
  throw new ElasticJobError(
    `could not connect to ZooKeeper at ${zookeeper.serverLists} within ` +
      `${registry.settings.connectionTimeoutMilliseconds} ms: check --zk (or ZK_CONNECT) and that ZooKeeper runs ` +
      `there; --timeout MS waits longer`,
  );
}
