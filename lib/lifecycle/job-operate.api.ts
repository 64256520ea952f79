import { registryErrorCode, ServerNotFoundError } from '../errors/elastic-job.errors.js';
import { triggerAllInstances } from '../job/trigger/trigger-all-instances.js';
import { JobNodePath } from '../job/paths.js';
import { SERVER_DISABLED, SERVER_ENABLED } from '../job/server/server.service.js';
import type { RegistryCenter } from '../registry/registry-center.js';
import type { OperationTarget } from './lifecycle.types.js';
import { NamespaceReader } from './namespace-reader.js';
import { checkTarget } from './operator-input.js';

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

  /** Fires the job now on every online instance (job/trigger/trigger-all-instances.ts); resolves with their ids. */
  async trigger(jobName: string, jobParameter?: string): Promise<string[]> {
    return triggerAllInstances(this.registry, await this.read.requireJob(jobName, 'trigger'), jobParameter);
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
    const { serverIp, jobs } = await this.resolve(target, 'shutdown');
    const instances = await this.targetInstances(jobs, serverIp);
    // A server named must be known where it is named, by an instance online or a server node.
    if (serverIp !== undefined && instances.length === 0 && (await this.serverNodes(jobs, serverIp)).length === 0)
      throw new ServerNotFoundError(serverIp, target.jobName, 'shutdown');
    await this.removeNodes(instances);
    return instances;
  }

  /** Shutdown, and the target's `servers/{ip}` nodes deleted too: the server leaves the job's statistics. */
  async remove(target: OperationTarget): Promise<OperatedNode[]> {
    const { serverIp, jobs } = await this.resolve(target, 'remove');
    const [instances, servers] = await Promise.all([
      this.targetInstances(jobs, serverIp),
      this.serverNodes(jobs, serverIp),
    ]);
    if (serverIp !== undefined && instances.length === 0 && servers.length === 0)
      throw new ServerNotFoundError(serverIp, target.jobName, 'remove');
    await this.removeNodes(instances);
    await this.removeNodes(servers);
    return [...instances, ...servers];
  }

  private async setServers(target: OperationTarget, value: string, operation: string): Promise<OperatedNode[]> {
    const servers = await this.targetServers(target, operation);
    const data = Buffer.from(value, 'utf8');
    // setData, never a create: a server node deleted meanwhile stays deleted, and is not in the answer.
    const written = await Promise.all(
      servers.map(async (node) => {
        try {
          await this.registry.setData(new JobNodePath(node.jobName).server(node.serverIp), data);
          return true;
        } catch (error) {
          if (registryErrorCode(error) !== 'NO_NODE') throw error;
          return false;
        }
      }),
    );
    const nodes = servers.filter((_, i) => written[i]);
    if (target.serverIp !== undefined && nodes.length === 0)
      throw new ServerNotFoundError(target.serverIp, target.jobName, operation);
    return nodes;
  }

  /**
   * The server nodes of the target, as ElasticJob picks them, but only those that exist: job and IP → that node;
   * job only → every server of the job; IP only → that server in every job where it has a node. A ServerNotFoundError
   * when an IP is named and has no node there (ElasticJob would write one: see the error for why not).
   */
  private async targetServers(target: OperationTarget, operation: string): Promise<OperatedNode[]> {
    const { serverIp, jobs } = await this.resolve(target, operation);
    const nodes = await this.serverNodes(jobs, serverIp);
    if (serverIp !== undefined && nodes.length === 0)
      throw new ServerNotFoundError(serverIp, target.jobName, operation);
    return nodes;
  }

  /** The target checked, its job required to exist, and the jobs it covers: that one, or every job. */
  private async resolve(
    target: OperationTarget,
    operation: string,
  ): Promise<{ jobName: string | undefined; serverIp: string | undefined; jobs: string[] }> {
    const { jobName, serverIp } = checkTarget(target, operation);
    if (jobName === undefined) return { jobName, serverIp, jobs: await this.read.jobNames() };
    await this.read.requireJob(jobName, operation);
    return { jobName, serverIp, jobs: [jobName] };
  }

  private async removeNodes(nodes: readonly OperatedNode[]): Promise<void> {
    await Promise.all(
      nodes.map((node) => {
        const paths = new JobNodePath(node.jobName);
        return this.registry.remove(
          node.instanceId === undefined ? paths.server(node.serverIp) : paths.instance(node.instanceId),
        );
      }),
    );
  }

  /** The server nodes there are: of `serverIp` in each of `jobs`, or every server of each job when no IP is named. */
  private async serverNodes(jobs: readonly string[], serverIp: string | undefined): Promise<OperatedNode[]> {
    if (serverIp === undefined) {
      const perJob = await Promise.all(
        jobs.map(async (jobName) =>
          (await this.read.children(new JobNodePath(jobName).servers)).map((ip) => ({ jobName, serverIp: ip })),
        ),
      );
      return perJob.flat();
    }
    const present = await Promise.all(jobs.map((job) => this.read.exists(new JobNodePath(job).server(serverIp))));
    return jobs.filter((_, i) => present[i]).map((jobName) => ({ jobName, serverIp }));
  }

  /** The online instances of the jobs, of one server or all (an instance's server is its node's `serverIp`). */
  private async targetInstances(jobs: readonly string[], serverIp: string | undefined): Promise<OperatedNode[]> {
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
