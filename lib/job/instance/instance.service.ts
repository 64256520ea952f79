import { parse, stringify } from 'yaml';
import type { JobInstance } from '../../interfaces/sharded-job-options.interface.js';
import { serverIpOfInstance } from '../paths.js';
import type { JobContext } from '../job-context.js';
import type { ServerService } from '../server/server.service.js';

/** `instances/{ip}@-@{pid}`, ephemeral (ElasticJob's InstanceService). */
export class InstanceService {
  constructor(
    private readonly ctx: JobContext,
    private readonly servers: ServerService,
  ) {}

  /** ElasticJob's instance YAML: `jobInstanceId: ...` and `serverIp: ...`. */
  localInstanceValue(): string {
    return stringify({ jobInstanceId: this.ctx.instanceId, serverIp: this.ctx.ip });
  }

  async persistOnline(): Promise<void> {
    await this.ctx.storage.persistEphemeral(this.ctx.paths.instance(this.ctx.instanceId), this.localInstanceValue());
  }

  async removeInstance(): Promise<void> {
    await this.ctx.storage.remove(this.ctx.paths.instance(this.ctx.instanceId));
  }

  isLocalInstanceOnline(): boolean {
    return this.ctx.storage.has(this.ctx.paths.instance(this.ctx.instanceId));
  }

  isInstanceOnline(instanceId: string): boolean {
    return this.ctx.storage.has(this.ctx.paths.instance(instanceId));
  }

  /** Live instances whose server is ENABLED, in ElasticJob's order (descending instance id): the sharding input. */
  getAvailableJobInstances(): JobInstance[] {
    const result: JobInstance[] = [];
    for (const id of this.ctx.storage.children(this.ctx.paths.instances)) {
      const value = this.ctx.storage.get(this.ctx.paths.instance(id));
      if (value === undefined) continue;
      let serverIp = serverIpOfInstance(id);
      try {
        const parsed = parse(value) as { serverIp?: unknown } | null;
        if (parsed && typeof parsed.serverIp === 'string' && parsed.serverIp !== '') serverIp = parsed.serverIp;
      } catch {
        // an older or foreign value: the id says which server it is
      }
      if (this.servers.isEnableServer(serverIp)) result.push({ jobInstanceId: id, serverIp });
    }
    return result;
  }
}
