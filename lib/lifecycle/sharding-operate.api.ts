import {
  describeError,
  InvalidOperationError,
  registryErrorCode,
  StoredConfigurationError,
} from '../errors/elastic-job.errors.js';
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
   * Runs one item again now on the instance that owns it (`sharding/{item}/instance`), whatever it did last: this
   * library's `rerun/{instanceId}` node holding the item (docs/operations/operator-api.md, "Running items again"). The
   * owner consumes the node and runs the item as a manual trigger limited to it; reruns of several items of one
   * owner gather in one node. Java instances have no listener on `rerun/` and leave it alone. Refused for an item
   * that is disabled or has no live owner: trigger the job then. Resolves with the owner asked.
   */
  async rerun(jobName: string, item: number): Promise<{ jobName: string; item: number; instanceId: string }> {
    const { paths, total } = await this.item(jobName, item, 'rerunItem');
    checkItemInRange(item, total, 'rerunItem');
    if (await this.read.exists(paths.disabled(item)))
      throw new InvalidOperationError('rerunItem', 'item', `item ${item} of '${jobName}' is disabled: enable it first`);
    const owner = (await this.read.text(paths.shardingInstance(item))) ?? '';
    if (owner === '' || !(await this.read.exists(paths.instance(owner))))
      throw new InvalidOperationError(
        'rerunItem',
        'item',
        `item ${item} of '${jobName}' has no live owner now (not sharded yet, or its instance is gone): trigger the ` +
          'job instead, the leader shards it at that firing',
      );
    // Reruns left for instances that are gone: a restarted instance with the same id would run them hours later
    // (as triggerAllInstances empties trigger/ for the same reason).
    const left = await this.read.children(paths.reruns);
    await Promise.all(
      left
        .filter((instanceId) => instanceId !== owner)
        .map(async (instanceId) => {
          if (!(await this.read.exists(paths.instance(instanceId))))
            await this.registry.remove(paths.rerun(instanceId)).catch(() => undefined);
        }),
    );
    const node = paths.rerun(owner);
    for (let attempt = 1; ; attempt++) {
      const pending = await this.registry.getData(node);
      if (pending === undefined) {
        try {
          await createWhileJobExists(this.registry, paths, [
            { path: paths.reruns },
            { path: node, data: Buffer.from(String(item), 'utf8') },
          ]);
          // Created, or left as it was by a rerun written meanwhile: read again to be sure the item is in it.
          const written = await this.registry.getData(node);
          if (written === undefined || written.data.toString('utf8').split(',').includes(String(item)))
            return { jobName, item, instanceId: owner };
          continue;
        } catch (error) {
          if (attempt >= 3) throw error;
          continue;
        }
      }
      const items = new Set(pending.data.toString('utf8').split(',').filter(Boolean));
      if (items.has(String(item))) return { jobName, item, instanceId: owner };
      items.add(String(item));
      try {
        await this.registry.transaction([
          { op: 'check', path: node, version: pending.stat.version },
          { op: 'setData', path: node, data: Buffer.from([...items].join(','), 'utf8') },
        ]);
        return { jobName, item, instanceId: owner };
      } catch (error) {
        // Consumed or changed meanwhile: start over (the owner has taken the earlier items already).
        const code = registryErrorCode(error);
        if ((code !== 'BAD_VERSION' && code !== 'NO_NODE') || attempt >= 3) throw error;
      }
    }
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
