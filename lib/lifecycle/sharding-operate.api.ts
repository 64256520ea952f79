import { InvalidOperationError } from '../errors/elastic-job.errors.js';
import { fromConfigYaml } from '../job/config/job-configuration.yaml.js';
import type { RegistryCenter } from '../registry/registry-center.js';
import { NamespaceReader } from './namespace-reader.js';

/**
 * ElasticJob's ShardingOperateAPI (docs/reference/elasticjob.md §6): `sharding/{item}/disabled` keeps one item
 * from running on any instance (it stays assigned), until enabled again.
 */
export class ShardingOperateApi {
  private readonly read: NamespaceReader;

  constructor(private readonly registry: RegistryCenter) {
    this.read = new NamespaceReader(registry);
  }

  async disable(jobName: string, item: number): Promise<void> {
    const paths = await this.item(jobName, item, 'disable item');
    await this.registry.persist(paths.disabled(item), Buffer.alloc(0));
  }

  /** Any item number: a flag left on an item beyond a shrunk shardingTotalCount can be removed too. */
  async enable(jobName: string, item: number): Promise<void> {
    const paths = await this.read.requireJob(jobName, 'enable item');
    if (!Number.isInteger(item) || item < 0)
      throw new InvalidOperationError('enable item', 'item', `must be an integer >= 0, got ${JSON.stringify(item)}`);
    await this.registry.remove(paths.disabled(item));
  }

  /** An item of the job's current configuration (ElasticJob checks neither; a typo there would go unnoticed). */
  private async item(jobName: string, item: number, operation: string) {
    const paths = await this.read.requireJob(jobName, operation);
    let total: number | undefined;
    try {
      total = fromConfigYaml((await this.read.text(paths.config)) ?? '').shardingTotalCount;
    } catch {
      total = undefined; // an unreadable config: any item number may be meant
    }
    if (!Number.isInteger(item) || item < 0 || (total !== undefined && total > 0 && item >= total)) {
      const range = total !== undefined && total > 0 ? ` in 0..${total - 1} (shardingTotalCount ${total})` : ' >= 0';
      throw new InvalidOperationError(operation, 'item', `must be an integer${range}, got ${JSON.stringify(item)}`);
    }
    return paths;
  }
}
