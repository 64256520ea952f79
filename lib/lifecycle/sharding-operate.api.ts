import { fromConfigYaml } from '../job/config/job-configuration.yaml.js';
import type { RegistryCenter } from '../registry/registry-center.js';
import { NamespaceReader } from './namespace-reader.js';
import { checkItemInRange, checkItemNumber } from './operator-input.js';

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
    const { paths, total } = await this.item(jobName, item, 'disableItem');
    if (total !== undefined) checkItemInRange(item, total, 'disableItem');
    await this.registry.persist(paths.disabled(item), Buffer.alloc(0));
  }

  /**
   * An item of the job's configuration, or one beyond it that still has its flag (left when shardingTotalCount
   * shrank): that flag can be removed too. Anything else is refused, as it names no item.
   */
  async enable(jobName: string, item: number): Promise<void> {
    const { paths, total } = await this.item(jobName, item, 'enableItem');
    if (total !== undefined && item >= total && !(await this.read.exists(paths.disabled(item))))
      checkItemInRange(item, total, 'enableItem');
    await this.registry.remove(paths.disabled(item));
  }

  /** The job's paths and its item count (undefined when its stored configuration cannot be read). */
  private async item(jobName: string, item: number, operation: string) {
    this.read.jobPaths(jobName, operation); // the name checked before the item, as the operator API checks them
    checkItemNumber(item, operation);
    const paths = await this.read.requireJob(jobName, operation);
    let total: number | undefined;
    try {
      total = fromConfigYaml((await this.read.text(paths.config)) ?? '').shardingTotalCount;
    } catch {
      total = undefined; // an unreadable config: any item number may be meant
    }
    return { paths, total: total !== undefined && total > 0 ? total : undefined };
  }
}
