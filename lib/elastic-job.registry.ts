import { Injectable } from '@nestjs/common';
import { JobNotFoundError, RegistryError, withinBound } from './errors/elastic-job.errors.js';
import { ElasticJobOrchestrator } from './elastic-job.orchestrator.js';
import type { JobStatus } from './job/job-scheduler.js';

/** Runtime view of this instance's sharded jobs; inject it anywhere. @publicApi */
@Injectable()
export class ElasticJobRegistry {
  constructor(private readonly orchestrator: ElasticJobOrchestrator) {}

  getJobNames(): string[] {
    return [...this.orchestrator.jobs.keys()];
  }

  /** Registration, leadership, assigned and running items of a job on this instance; JobNotFoundError if none. */
  getJobStatus(jobName: string): JobStatus {
    return this.scheduler(jobName).status();
  }

  /**
   * Fires the job now on every live instance of the cluster (ElasticJob's trigger: one `trigger/{instanceId}` node
   * each). An instance whose firing is running runs once more after it. Resolves with the number of instances;
   * rejects with a JobNotFoundError for a name this app has no job of, and with a RegistryError
   * (`CONNECTION_LOSS`) when ZooKeeper does not answer within the connection timeout.
   */
  async trigger(jobName: string): Promise<number> {
    const scheduler = this.scheduler(jobName);
    const registry = this.orchestrator.registryCenter;
    const timeoutMs = registry?.settings.connectionTimeoutMilliseconds ?? 0;
    if (!registry || !(registry.isConnected() || (await registry.waitForConnection(timeoutMs)))) {
      throw new RegistryError(
        'CONNECTION_LOSS',
        undefined,
        `Job '${jobName}': cannot trigger, not connected to ZooKeeper (waited ${timeoutMs} ms); try again once it is`,
      );
    }
    return withinBound(scheduler.triggerAllInstances(), timeoutMs, `Job '${jobName}': trigger`);
  }

  /** A job of this app; a JobNotFoundError otherwise (none before bootstrap). */
  private scheduler(jobName: string) {
    const scheduler = this.orchestrator.jobs.get(jobName);
    if (!scheduler) throw new JobNotFoundError(jobName, this.getJobNames(), 'app');
    return scheduler;
  }

  /** ZooKeeper requests this process has sent (reads, writes, addWatch) and watch events received, since start. */
  getZookeeperStats(): { reads: number; writes: number; watchRequests: number; watchEvents: number } {
    return {
      ...(this.orchestrator.registryCenter?.stats ?? { reads: 0, writes: 0, watchRequests: 0, watchEvents: 0 }),
    };
  }

  /** Whether the ZooKeeper session is connected right now. */
  isConnected(): boolean {
    return this.orchestrator.registryCenter?.isConnected() ?? false;
  }
}
