import { Injectable, Optional } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { ElasticJobRegistry } from '../elastic-job.registry.js';
import { ElasticJobWorkflows } from '../elastic-job.workflows.js';

/** What the indicator tells of each job on this instance. */
export interface JobHealthDetails {
  registered: boolean;
  /** `ok`, `retrying` (with the last error) or `failed` (a conflict or bad configuration: nothing is retried). */
  registration: 'ok' | 'retrying' | 'failed';
  isLeader: boolean;
  shardingItems: number[];
  lastError?: string;
  /** Set when the job was stopped here on purpose (the app shutting down, or an operator's `shutdown`). */
  shutdownBy?: 'application' | 'operator';
}

/**
 * A `@nestjs/terminus` health indicator (entry point `nestjs-elastic-job/terminus`, docs/guide/health-and-metrics.md,
 * "Health"): down when the ZooKeeper session is not connected or a job is not registered as it should be (retrying or
 * failed); up otherwise, and with `enabled: false`. A job an operator shut down on this instance is reported, not
 * counted as down: it was stopped on purpose, and restarting the app would undo that.
 */
@Injectable()
export class ElasticJobHealthIndicator {
  constructor(
    private readonly health: HealthIndicatorService,
    private readonly jobs: ElasticJobRegistry,
    @Optional() private readonly workflows?: ElasticJobWorkflows,
  ) {}

  isHealthy<const Key extends string = 'elastic-job'>(key: Key = 'elastic-job' as Key): HealthIndicatorResult<Key> {
    const indicator = this.health.check(key);
    // Nothing is scheduled here, nothing can be unhealthy.
    if (!this.jobs.enabled) return indicator.up({ enabled: false });
    const details: Record<string, JobHealthDetails> = {};
    let connected = true;
    const problems: string[] = [];
    for (const jobName of this.jobs.getJobNames()) {
      const status = this.jobs.getJobStatus(jobName);
      connected &&= status.connected;
      details[jobName] = {
        registered: status.registered,
        registration: status.health.registration,
        isLeader: status.isLeader,
        shardingItems: status.shardingItems,
        ...(status.health.lastError ? { lastError: status.health.lastError } : {}),
        ...(status.shutdown ? { shutdownBy: status.shutdown.by } : {}),
      };
      if (!status.shutdown && status.health.registration !== 'ok')
        problems.push(`job '${jobName}' registration ${status.health.registration}`);
    }
    if (!connected) problems.unshift('not connected to ZooKeeper');
    // Workflows (docs/guide/workflows.md): each one's coordinator here; one that could not start is down.
    const workflows = this.workflows?.status() ?? {};
    for (const [name, workflow] of Object.entries(workflows))
      if (workflow.error) problems.push(`workflow '${name}' could not start: ${workflow.error}`);
    const data = { connected, jobs: details, ...(Object.keys(workflows).length > 0 ? { workflows } : {}) };
    return problems.length > 0 ? indicator.down({ ...data, message: problems.join('; ') }) : indicator.up(data);
  }
}
