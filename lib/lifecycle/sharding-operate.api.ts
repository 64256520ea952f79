import { describeError, StoredConfigurationError } from '../errors/elastic-job.errors.js';
import { fromConfigYaml, StoredConfigProblem } from '../job/config/job-configuration.yaml.js';
import type { RegistryCenter } from '../registry/registry-center.js';
import { createWhileJobExists } from '../job/storage/create-while-job-exists.js';
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
    checkItemInRange(item, total, 'disableItem');
    // Its parents too (before the job's first sharding there are none), and only while the job is there.
    await createWhileJobExists(this.registry, paths, [
      { path: paths.sharding },
      { path: paths.shardingItem(item) },
      { path: paths.disabled(item) },
    ]);
  }

  /**
   * An item of the job's configuration, or one beyond it that still has its flag (left when shardingTotalCount
   * shrank): that flag can be removed too. Anything else is refused, as it names no item.
   */
  async enable(jobName: string, item: number): Promise<void> {
    const { paths, total } = await this.item(jobName, item, 'enableItem');
    if (item >= total && !(await this.read.exists(paths.disabled(item)))) checkItemInRange(item, total, 'enableItem');
    await this.registry.remove(paths.disabled(item));
  }

  /**
   * The job's paths and its item count. A StoredConfigurationError when its stored configuration cannot be read:
   * which items it has is then unknown, and no item is guessed at.
   */
  private async item(jobName: string, item: number, operation: string) {
    this.read.jobPaths(jobName, operation); // the name checked before the item, as the operator API checks them
    checkItemNumber(item, operation);
    const paths = await this.read.requireJob(jobName, operation);
    let total: number;
    try {
      total = fromConfigYaml((await this.read.text(paths.config)) ?? '').shardingTotalCount;
    } catch (error) {
      const detail = error instanceof StoredConfigProblem ? error.message : describeError(error);
      throw new StoredConfigurationError(jobName, 'shardingTotalCount', `the stored configuration ${detail}`);
    }
    if (!Number.isInteger(total) || total <= 0)
      throw new StoredConfigurationError(
        jobName,
        'shardingTotalCount',
        `the stored configuration has ${JSON.stringify(total)}, not an item count`,
      );
    return { paths, total };
  }
}
