import { serverIpOfInstance } from '../paths.js';
import type { JobContext } from '../context/job-context.js';

export const SERVER_ENABLED = 'ENABLED';
export const SERVER_DISABLED = 'DISABLED';

/**
 * `servers/{ip}` (ElasticJob's ServerService). An instance belongs to a server by exact IP match. A server is
 * enabled unless its node says `DISABLED`, as ElasticJob reads it (`ServerService.isEnableServer`): ElasticJob 2.x
 * wrote '' for enabled, and other tools may write anything.
 */
export class ServerService {
  /** Values read as "enabled" that are not ours, already logged, by node path. */
  private reportedValues: Map<string, string> | undefined;

  constructor(private readonly ctx: JobContext) {}

  async persistOnline(enabled: boolean): Promise<void> {
    await this.ctx.storage.replace(this.ctx.paths.server(this.ctx.ip), enabled ? SERVER_ENABLED : SERVER_DISABLED, {
      fromCache: true,
    });
  }

  isEnableServer(ip: string): boolean {
    const path = this.ctx.paths.server(ip);
    const value = this.ctx.storage.cached.get(path);
    if (value === SERVER_DISABLED) return false;
    if (value !== undefined && value !== SERVER_ENABLED && value !== '' && this.reportedValues?.get(path) !== value) {
      (this.reportedValues ??= new Map()).set(path, value);
      this.ctx.logger.warn(
        `${this.ctx.storage.fullPath(path)} holds '${value.slice(0, 40)}', not ENABLED or DISABLED: read as ` +
          `enabled, as ElasticJob reads it`,
      );
    }
    return true;
  }

  /** Enabled and with at least one live instance of exactly this IP. */
  isAvailableServer(ip: string): boolean {
    return (
      this.isEnableServer(ip) &&
      this.ctx.storage.cached.someChild(this.ctx.paths.instances, (id) => serverIpOfInstance(id) === ip)
    );
  }

  hasAvailableServers(): boolean {
    return this.ctx.storage.cached.children(this.ctx.paths.servers).some((ip) => this.isAvailableServer(ip));
  }

  /** ElasticJob 3.0.5: delete `servers/{ip}` nodes with a value but no live instance. */
  async removeOfflineServers(): Promise<void> {
    const { storage, paths } = this.ctx;
    const offline = (instanceIds: readonly string[]): string[] => {
      const online = new Set(instanceIds.map(serverIpOfInstance));
      return storage.cached
        .children(paths.servers)
        .filter((ip) => !online.has(ip) && (storage.cached.get(paths.server(ip)) ?? '').trim() !== '');
    };
    if (offline(storage.cached.children(paths.instances)).length === 0) return;
    // A peer registering writes its server and instance nodes together; our cache may have applied the first and
    // not yet the second (a cluster test saw a live peer's server node removed). Deleting asks ZooKeeper first.
    const live = await storage.direct.children(paths.instances);
    if (live === undefined) return;
    await Promise.all(offline(live).map((ip) => storage.remove(paths.server(ip))));
  }
}
