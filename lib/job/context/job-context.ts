import type { Logger } from '@nestjs/common';
import type { JobEventPublisher } from '../events/job-event-publisher.js';
import type { ConnectionView } from '../../registry/registry-center.js';
import type { JobNodePath } from '../paths.js';
import type { JobPlugins } from '../plugins/job-plugins.js';
import type { JobNodeStorage } from '../storage/job-node-storage.js';
import type { PreparationLead } from '../../schedule/preparation-lead.js';

/** What every coordination service of one job shares. */
export interface JobContext {
  readonly jobName: string;
  readonly paths: JobNodePath;
  readonly storage: JobNodeStorage;
  /** The session's state; ZooKeeper itself is reached only through `storage`. */
  readonly connection: ConnectionView;
  readonly logger: Logger;
  /** `{ip}@-@{pid}` */
  readonly instanceId: string;
  readonly ip: string;
  /** Bound of every coordination wait (latch, leader, sharding). */
  readonly waitTimeoutMs: number;
  /** Sharding strategies and error handlers by type name. */
  readonly plugins: JobPlugins;
  /** The job's public events (docs/guide/events-and-listeners.md, "Events"). */
  readonly events: JobEventPublisher;
  /** How long before its instants a cron firing prepares; its firings tell it how long they took. */
  readonly preparationLead: PreparationLead;
}
