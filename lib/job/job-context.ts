import type { Logger } from '@nestjs/common';
import type { ZookeeperRegistryCenter } from '../registry/zookeeper-registry-center.js';
import type { JobNodePath } from './paths.js';
import type { JobPlugins } from './plugins/job-plugins.js';
import type { JobNodeStorage } from './storage/job-node-storage.js';

/** What every coordination service of one job shares. */
export interface JobContext {
  readonly jobName: string;
  readonly paths: JobNodePath;
  readonly storage: JobNodeStorage;
  readonly registry: ZookeeperRegistryCenter;
  readonly logger: Logger;
  /** `{ip}@-@{pid}` */
  readonly instanceId: string;
  readonly ip: string;
  /** Bound of every coordination wait (latch, leader, sharding). */
  readonly waitTimeoutMs: number;
  /** Sharding strategies and error handlers by type name. */
  readonly plugins: JobPlugins;
}
