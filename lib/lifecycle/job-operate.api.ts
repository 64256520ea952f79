import { InvalidOperationError, registryErrorCode } from '../errors/elastic-job.errors.js';
import { JobNodePath } from '../job/paths.js';
import { SERVER_DISABLED, SERVER_ENABLED } from '../job/server/server.service.js';
import type { RegistryCenter } from '../registry/registry-center.js';
import type { OperationTarget } from './lifecycle.types.js';
import { NamespaceReader } from './namespace-reader.js';

/** A `servers/{ip}` or `instances/{id}` node an operation wrote or deleted. */
export interface OperatedNode {
  jobName: string;
  serverIp: string;
  /** For shutdown and remove: the instance whose node was deleted. */
  instanceId?: string;
}

/**
 * ElasticJob's JobOperateAPI (docs/reference/elasticjob.md §6): the same znodes written, so that its Java tools and
 * this API steer the same clusters. Every running instance, ours or Java's, reacts to them: a trigger fires the job
 * at once, a disabled server stops taking items (the leader reshards), a shutdown stops the job on that instance.
 */
export class JobOperateApi {
  private readonly read: NamespaceReader;

  constructor(private readonly registry: RegistryCenter) {
    this.read = new NamespaceReader(registry);
  }

  /**
   * Fires the job now on every online instance: as ElasticJob's InstanceService.triggerAllInstances, `trigger/`
   * is emptied (triggers left for instances that are gone) and a `trigger/{instanceId}` made for each online one.
   * Resolves with the instances reached. `jobParameter` is written into each trigger node: our instances run that
   * firing with it (Java instances ignore the node's data and run with their own).
   */
  async trigger(jobName: string, jobParameter?: string): Promise<string[]> {
    const paths = await this.read.requireJob(jobName, 'trigger');
    await this.registry.removeRecursive(paths.triggers);
    const instances = await this.read.children(paths.instances);
    await Promise.all(
      instances.map(async (id) => {
        try {
          await this.registry.createWithParents(paths.trigger(id), Buffer.from(jobParameter ?? ''), 'PERSISTENT');
        } catch (error) {
          if (registryErrorCode(error) !== 'NODE_EXISTS') throw error; // already triggered, not yet consumed
        }
      }),
    );
    return instances;
  }

  /** `servers/{ip}` = DISABLED: no item runs there (the leader reshards without it). */
  disable(target: OperationTarget): Promise<OperatedNode[]> {
    return this.setServers(target, SERVER_DISABLED, 'disable');
  }

  /** `servers/{ip}` = ENABLED: the server takes items again. */
  enable(target: OperationTarget): Promise<OperatedNode[]> {
    return this.setServers(target, SERVER_ENABLED, 'enable');
  }

  /**
   * Deletes the instance nodes of the target: each instance stops the job (ElasticJob's shutdown listener), and
   * peers take its items over. The process goes on; its other jobs are untouched.
   */
  async shutdown(target: OperationTarget): Promise<OperatedNode[]> {
    const nodes = await this.targetInstances(target, 'shutdown');
    await Promise.all(
      nodes.map((node) => this.registry.remove(new JobNodePath(node.jobName).instance(node.instanceId!))),
    );
    return nodes;
  }

  /** Shutdown, then the target's `servers/{ip}` nodes are deleted too: the server leaves the job's statistics. */
  async remove(target: OperationTarget): Promise<OperatedNode[]> {
    const instances = await this.shutdown(target);
    const servers = await this.targetServers(target, 'remove');
    await Promise.all(servers.map((node) => this.registry.remove(new JobNodePath(node.jobName).server(node.serverIp))));
    return [...instances, ...servers];
  }

  private async setServers(target: OperationTarget, value: string, operation: string): Promise<OperatedNode[]> {
    const servers = await this.targetServers(target, operation);
    const data = Buffer.from(value, 'utf8');
    await Promise.all(
      servers.map((node) => this.registry.persist(new JobNodePath(node.jobName).server(node.serverIp), data)),
    );
    return servers;
  }

  /**
   * As ElasticJob picks them: job and IP → that one node (written even if absent); job only → every server of the
   * job; IP only → that server in every job where it has a node.
   */
  private async targetServers(target: OperationTarget, operation: string): Promise<OperatedNode[]> {
    const { jobName, serverIp } = checkTarget(target, operation, this.read);
    if (jobName !== undefined) {
      const paths = await this.read.requireJob(jobName, operation);
      const ips = serverIp !== undefined ? [serverIp] : await this.read.children(paths.servers);
      return ips.map((ip) => ({ jobName, serverIp: ip }));
    }
    const jobs = await this.read.jobNames();
    const present = await Promise.all(jobs.map((job) => this.read.exists(new JobNodePath(job).server(serverIp!))));
    return jobs.filter((_, i) => present[i]).map((job) => ({ jobName: job, serverIp: serverIp! }));
  }

  /** The online instances of the target (an instance's server is its node's `serverIp`). */
  private async targetInstances(target: OperationTarget, operation: string): Promise<OperatedNode[]> {
    const { jobName, serverIp } = checkTarget(target, operation, this.read);
    if (jobName !== undefined) await this.read.requireJob(jobName, operation);
    const jobs = jobName !== undefined ? [jobName] : await this.read.jobNames();
    const perJob = await Promise.all(
      jobs.map(async (job) => {
        const ids = await this.read.children(new JobNodePath(job).instances);
        const ips = await Promise.all(ids.map((id) => this.read.instanceServerIp(job, id)));
        return ids.flatMap((id, i): OperatedNode[] => {
          const ip = ips[i];
          if (ip === undefined || (serverIp !== undefined && ip !== serverIp)) return [];
          return [{ jobName: job, serverIp: ip, instanceId: id }];
        });
      }),
    );
    return perJob.flat();
  }
}

function checkTarget(target: OperationTarget, operation: string, read: NamespaceReader): OperationTarget {
  if (typeof target !== 'object' || target === null || (target.jobName === undefined && target.serverIp === undefined))
    throw new InvalidOperationError(operation, 'target', 'name a jobName, a serverIp, or both');
  if (target.serverIp !== undefined) read.checkServerIp(target.serverIp, operation);
  if (target.jobName !== undefined) read.jobPaths(target.jobName, operation);
  return target;
}
