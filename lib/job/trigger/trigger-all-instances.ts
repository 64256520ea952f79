import type { RegistryCenter } from '../../registry/registry-center.js';
import type { JobNodePath } from '../paths.js';
import { createWhileJobExists } from '../storage/create-while-job-exists.js';

/**
 * Fires a job now on every online instance, as ElasticJob's InstanceService.triggerAllInstances does: `trigger/` is
 * emptied (triggers left for instances that are gone would fire a restarted instance with the same id), then a
 * `trigger/{instanceId}` made for each instance online, in one transaction with a check of the config node (a job
 * removed meanwhile gets nothing back). `jobParameter` is each node's data: this library's instances run that firing
 * with it; Java instances ignore the data and run with their own. The one implementation, behind
 * `ElasticJobRegistry.trigger` and the operator's trigger on every surface. Resolves with the instances reached.
 */
export async function triggerAllInstances(
  registry: RegistryCenter,
  paths: JobNodePath,
  jobParameter = '',
): Promise<string[]> {
  await registry.removeRecursive(paths.triggers);
  const instances = ((await registry.getChildren(paths.instances)) ?? []).sort();
  if (instances.length === 0) return instances;
  const data = Buffer.from(jobParameter, 'utf8');
  await createWhileJobExists(registry, paths, [
    { path: paths.triggers },
    ...instances.map((id) => ({ path: paths.trigger(id), data })),
  ]);
  return instances;
}
