import { fromConfigYaml, type StoredJobConfiguration } from '../job/config/job-configuration.yaml.js';
import { JobNodePath } from '../job/paths.js';
import { SERVER_DISABLED } from '../job/server/server.service.js';
import type { RegistryReads } from '../registry/registry-center.js';
import type { JobBriefInfo, JobBriefStatus } from './lifecycle.types.js';
import { NamespaceReader } from './namespace-reader.js';
import { checkServerIp } from './operator-input.js';

/** ElasticJob's JobStatisticsAPI: the jobs of a namespace at a glance (docs/reference/elasticjob.md §6). */
export class JobStatisticsApi {
  private readonly read: NamespaceReader;

  constructor(registry: RegistryReads) {
    this.read = new NamespaceReader(registry);
  }

  /** Jobs with a config node. */
  async getJobsTotalCount(): Promise<number> {
    return (await this.getAllJobsBriefInfo()).length;
  }

  /** Every job with a config node, by name. */
  async getAllJobsBriefInfo(): Promise<JobBriefInfo[]> {
    const infos = await Promise.all((await this.read.jobNames()).map((name) => this.getJobBriefInfo(name)));
    return infos.filter((info): info is JobBriefInfo => info !== undefined);
  }

  /** One job; undefined when it has no config node. */
  async getJobBriefInfo(jobName: string): Promise<JobBriefInfo | undefined> {
    const paths = this.read.jobPaths(jobName, 'getJobBriefInfo');
    const yaml = await this.read.text(paths.config);
    if (yaml === undefined) return undefined;
    const config = readable(yaml);
    const [instances, status] = await Promise.all([this.read.children(paths.instances), this.status(jobName)]);
    return {
      jobName,
      status,
      description: config?.description ?? '',
      cron: config?.cron,
      instanceCount: instances.length,
      shardingTotalCount: config?.shardingTotalCount ?? 0,
    };
  }

  /** The jobs a server takes part in (it has a `servers/{ip}` node there): `DISABLED` or `OK` on that server. */
  async getJobsBriefInfo(serverIp: string): Promise<JobBriefInfo[]> {
    checkServerIp(serverIp, 'getJobsBriefInfo');
    const infos = await Promise.all(
      (await this.read.jobNames()).map(async (jobName): Promise<JobBriefInfo | undefined> => {
        const paths = new JobNodePath(jobName);
        const server = await this.read.text(paths.server(serverIp));
        if (server === undefined) return undefined;
        const [yaml, instances] = await Promise.all([
          this.read.text(paths.config),
          this.read.children(paths.instances),
        ]);
        const config = yaml === undefined ? undefined : readable(yaml);
        const ips = await Promise.all(instances.map((id) => this.read.instanceServerIp(jobName, id)));
        return {
          jobName,
          status: server === SERVER_DISABLED ? 'DISABLED' : 'OK',
          description: config?.description ?? '',
          cron: config?.cron,
          instanceCount: ips.filter((ip) => ip === serverIp).length,
          shardingTotalCount: config?.shardingTotalCount ?? 0,
        };
      }),
    );
    return infos.filter((info): info is JobBriefInfo => info !== undefined);
  }

  /** ElasticJob's rules, first match wins: CRASHED, DISABLED, SHARDING_FLAG, OK. */
  private async status(jobName: string): Promise<JobBriefStatus> {
    const paths = new JobNodePath(jobName);
    const [instances, servers, items] = await Promise.all([
      this.read.children(paths.instances),
      this.read.children(paths.servers),
      this.read.children(paths.sharding),
    ]);
    if (instances.length === 0) return 'CRASHED';
    const serverValues = await Promise.all(servers.map((ip) => this.read.text(paths.server(ip))));
    // As ElasticJob counts: no server node at all also reads as all disabled.
    if (serverValues.every((value) => value === SERVER_DISABLED)) return 'DISABLED';
    const owners = await Promise.all(items.map((item) => this.read.text(`${paths.sharding}/${item}/instance`)));
    const assigned = new Set(owners.filter((owner): owner is string => owner !== undefined && owner !== ''));
    const online = new Set(instances);
    if (assigned.size === 0 || [...assigned].some((owner) => !online.has(owner))) return 'SHARDING_FLAG';
    return 'OK';
  }
}

/** The stored configuration, or undefined when it cannot be read (statistics still show the job). */
function readable(yaml: string): StoredJobConfiguration | undefined {
  try {
    return fromConfigYaml(yaml);
  } catch {
    return undefined;
  }
}
