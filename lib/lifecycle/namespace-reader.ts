import { parse } from 'yaml';
import { JobNotFoundError } from '../errors/elastic-job.errors.js';
import { JobNodePath, serverIpOfInstance } from '../job/paths.js';
import type { RegistryReads } from '../registry/registry-center.js';
import { checkJobName } from './operator-input.js';

/**
 * Reads of a namespace for the operator API, always straight from ZooKeeper (never a cache that may be stale:
 * ElasticJob #2526). Missing nodes read as undefined or empty, as ElasticJob's registry center reads them.
 */
export class NamespaceReader {
  constructor(private readonly registry: RegistryReads) {}

  /** The namespace's children: every job, and anything else kept there (statistics skip nodes without config). */
  async jobNames(): Promise<string[]> {
    return this.children('/');
  }

  async children(path: string): Promise<string[]> {
    return ((await this.registry.getChildren(path)) ?? []).sort();
  }

  async text(path: string): Promise<string | undefined> {
    return (await this.registry.getData(path))?.data.toString('utf8');
  }

  async exists(path: string): Promise<boolean> {
    return (await this.registry.exists(path)) !== undefined;
  }

  /**
   * The server IP of an online instance: its node's `serverIp` (ElasticJob's JobInstance YAML), or the part of its
   * id before `@-@` when the node is empty or unreadable (older writers). Undefined when the instance is gone.
   */
  async instanceServerIp(jobName: string, instanceId: string): Promise<string | undefined> {
    const value = await this.text(new JobNodePath(jobName).instance(instanceId));
    if (value === undefined) return undefined;
    try {
      const stored: unknown = parse(value);
      if (typeof stored === 'object' && stored !== null) {
        const ip = (stored as { serverIp?: unknown }).serverIp;
        if (typeof ip === 'string' && ip !== '') return ip;
      }
    } catch {
      // not YAML: fall back to the id
    }
    return serverIpOfInstance(instanceId);
  }

  /** The job's paths; an InvalidOperationError when the name is not one node name (it may not leave the job). */
  jobPaths(jobName: string, operation: string): JobNodePath {
    return new JobNodePath(checkJobName(jobName, operation));
  }

  /** The job's paths; an InvalidOperationError for a malformed name, a JobNotFoundError when it has no config node. */
  async requireJob(jobName: string, operation: string): Promise<JobNodePath> {
    const paths = this.jobPaths(jobName, operation);
    if (!(await this.exists(paths.config))) throw new JobNotFoundError(jobName);
    return paths;
  }
}
