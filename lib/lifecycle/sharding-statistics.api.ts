import type { RegistryReads } from '../registry/registry-center.js';
import type { ShardingInfo, ShardingItemStatus } from './lifecycle.types.js';
import { NamespaceReader } from './namespace-reader.js';

/** ElasticJob's ShardingStatisticsAPI: where each item of a job runs (docs/reference/elasticjob.md §6). */
export class ShardingStatisticsApi {
  private readonly read: NamespaceReader;

  constructor(registry: RegistryReads) {
    this.read = new NamespaceReader(registry);
  }

  /**
   * The job's items as `sharding/` holds them, by item number; empty before its first sharding. A JobNotFoundError
   * when the job has no config node: "no items yet" and "no such job" must not read alike.
   */
  async getShardingInfo(jobName: string): Promise<ShardingInfo[]> {
    const paths = await this.read.requireJob(jobName, 'getShardingInfo');
    const items = (await this.read.children(paths.sharding))
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .sort((a, b) => a - b);
    return Promise.all(
      items.map(async (item): Promise<ShardingInfo> => {
        const [owner, disabled, running, failover] = await Promise.all([
          this.read.text(paths.shardingInstance(item)),
          this.read.exists(paths.disabled(item)),
          this.read.exists(paths.running(item)),
          this.read.exists(paths.failover(item)),
        ]);
        const serverIp = owner ? await this.read.instanceServerIp(jobName, owner) : undefined;
        const online = serverIp !== undefined;
        const status: ShardingItemStatus = disabled
          ? 'DISABLED'
          : running
            ? 'RUNNING'
            : !online
              ? 'SHARDING_FLAG'
              : 'PENDING';
        return { item, instanceId: online ? owner : undefined, serverIp, status, failover };
      }),
    );
  }
}
