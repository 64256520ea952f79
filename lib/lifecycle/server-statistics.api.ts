import { JobNodePath } from '../job/paths.js';
import { SERVER_DISABLED } from '../job/server/server.service.js';
import type { RegistryReads } from '../registry/registry-center.js';
import type { JobServerInfo, ServerBriefInfo } from './lifecycle.types.js';
import { NamespaceReader } from './namespace-reader.js';

/** ElasticJob's ServerStatisticsAPI: the servers of a namespace over all jobs (docs/reference/elasticjob.md §6). */
export class ServerStatisticsApi {
  private readonly read: NamespaceReader;

  constructor(registry: RegistryReads) {
    this.read = new NamespaceReader(registry);
  }

  async getServersTotalCount(): Promise<number> {
    return (await this.getAllServersBriefInfo()).length;
  }

  /** Every server with a `servers/{ip}` node in some job, by IP. */
  async getAllServersBriefInfo(): Promise<ServerBriefInfo[]> {
    const servers = new Map<string, { jobs: Set<string>; disabled: number; instances: Set<string> }>();
    const jobs = await Promise.all(
      (await this.read.jobNames()).map(async (jobName) => ({ jobName, ...(await this.serverNodes(jobName)) })),
    );
    for (const job of jobs) {
      job.ips.forEach((ip, i) => {
        const server = servers.get(ip) ?? { jobs: new Set(), disabled: 0, instances: new Set() };
        servers.set(ip, server);
        server.jobs.add(job.jobName);
        if (job.values[i] === SERVER_DISABLED) server.disabled++;
      });
      // As ElasticJob: an instance counts for its server only where that server has a node.
      job.instances.forEach((id, i) => {
        const ip = job.instanceIps[i];
        if (ip !== undefined) servers.get(ip)?.instances.add(id);
      });
    }
    return [...servers.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([serverIp, server]) => ({
        serverIp,
        instances: [...server.instances].sort(),
        jobNames: [...server.jobs].sort(),
        instancesNum: server.instances.size,
        jobsNum: server.jobs.size,
        disabledJobsNum: server.disabled,
      }));
  }

  /**
   * One job's servers: each `servers/{ip}` node with its status and the job's instances online on it. Not an
   * ElasticJob API call (its console reads these nodes for its job detail); undefined when the job is not there.
   */
  async getJobServersInfo(jobName: string): Promise<JobServerInfo[] | undefined> {
    if (!(await this.read.exists(new JobNodePath(jobName).config))) return undefined;
    const { ips, values, instances, instanceIps } = await this.serverNodes(jobName);
    return ips
      .map((serverIp, i): JobServerInfo => ({
        serverIp,
        status: values[i] === SERVER_DISABLED ? 'DISABLED' : 'ENABLED',
        instances: instances.filter((_, k) => instanceIps[k] === serverIp).sort(),
      }))
      .sort((a, b) => (a.serverIp < b.serverIp ? -1 : a.serverIp > b.serverIp ? 1 : 0));
  }

  /** A job's `servers/{ip}` nodes with their values, and its instances with the server each one's node names. */
  private async serverNodes(jobName: string): Promise<{
    ips: string[];
    values: Array<string | undefined>;
    instances: string[];
    instanceIps: Array<string | undefined>;
  }> {
    const paths = new JobNodePath(jobName);
    const [ips, instances] = await Promise.all([
      this.read.children(paths.servers),
      this.read.children(paths.instances),
    ]);
    const [values, instanceIps] = await Promise.all([
      Promise.all(ips.map((ip) => this.read.text(paths.server(ip)))),
      Promise.all(instances.map((id) => this.read.instanceServerIp(jobName, id))),
    ]);
    return { ips, values, instances, instanceIps };
  }
}
