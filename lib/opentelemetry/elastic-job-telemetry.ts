import { Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import {
  metrics,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type BatchObservableResult,
} from '@opentelemetry/api';
import type { Subscription } from 'rxjs';
import { ElasticJobRegistry } from '../elastic-job.registry.js';
import type { ElasticJobEvent } from '../events/elastic-job-event.types.js';
import type { ShardingContext } from '../interfaces/sharding-context.interface.js';

/** The instrumentation scope of every meter and tracer here. */
export const TELEMETRY_SCOPE = 'nestjs-elastic-job';

/**
 * Metrics and spans through the OpenTelemetry API (entry point `nestjs-elastic-job/opentelemetry`,
 * docs/guide/health-and-metrics.md "Metrics and tracing"): a no-op until the app installs an OpenTelemetry SDK. Add it
 * to the providers of the module that imports ElasticJobModule. Instruments (names and attributes in that page): item
 * executions, item duration, firing lateness, misfires, failovers, reshards (from the jobs' events); leadership, owned
 * items, connection state and ZooKeeper requests (read when the SDK collects); and a span per item execution, active
 * while the handler runs, so that its own spans are children.
 */
@Injectable()
export class ElasticJobTelemetry implements OnModuleInit, OnApplicationShutdown {
  private subscription: Subscription | undefined;
  private removeObservers: (() => void) | undefined;
  private removeInterceptor: (() => void) | undefined;

  constructor(private readonly jobs: ElasticJobRegistry) {}

  onModuleInit(): void {
    if (!this.jobs.enabled) return;
    const meter = metrics.getMeter(TELEMETRY_SCOPE);
    const tracer = trace.getTracer(TELEMETRY_SCOPE);

    const executions = meter.createCounter('elasticjob.item.executions', {
      description: 'Item executions completed on this instance, by job and result',
    });
    const duration = meter.createHistogram('elasticjob.item.duration', {
      description: 'How long an item execution took',
      unit: 's',
    });
    const lateness = meter.createHistogram('elasticjob.firing.lateness', {
      description: 'How long after its cron instant an item started (cron firings only)',
      unit: 's',
    });
    const misfires = meter.createCounter('elasticjob.misfires', {
      description: 'Items flagged as misfired because they were still running at a firing',
    });
    const failovers = meter.createCounter('elasticjob.failovers', {
      description: 'Items of crashed instances taken over by this instance',
    });
    const reshards = meter.createCounter('elasticjob.reshards', {
      description: "Changes of this instance's items after a resharding",
    });
    const job = (event: { jobName: string }): Attributes => ({ 'elasticjob.job.name': event.jobName });
    this.subscription = this.jobs.events$.subscribe((event: ElasticJobEvent) => {
      switch (event.type) {
        case 'item.started':
          if (event.scheduledTime)
            lateness.record(Math.max(0, event.startTime.getTime() - event.scheduledTime.getTime()) / 1000, job(event));
          return;
        case 'item.completed':
          executions.add(1, {
            ...job(event),
            'elasticjob.execution.result': event.success ? 'success' : 'failure',
            'elasticjob.execution.source': event.source,
          });
          duration.record((event.completeTime.getTime() - event.startTime.getTime()) / 1000, {
            ...job(event),
            'elasticjob.execution.result': event.success ? 'success' : 'failure',
          });
          return;
        case 'misfire.flagged':
          misfires.add(event.items.length, job(event));
          return;
        case 'failover.claimed':
          failovers.add(1, job(event));
          return;
        case 'sharding.assigned':
          reshards.add(1, job(event));
          return;
        default:
          return;
      }
    });

    const leader = meter.createObservableGauge('elasticjob.leader', {
      description: '1 when this instance is the leader of the job',
    });
    const owned = meter.createObservableGauge('elasticjob.items.owned', {
      description: 'Items of the job assigned to this instance',
    });
    const connected = meter.createObservableGauge('elasticjob.zookeeper.connected', {
      description: '1 while the ZooKeeper session is connected',
    });
    const requests = meter.createObservableCounter('elasticjob.zookeeper.requests', {
      description: 'ZooKeeper requests sent by this process, by kind',
    });
    const observe = (observer: BatchObservableResult): void => {
      let anyConnected = false;
      for (const jobName of this.jobs.getJobNames()) {
        const status = this.jobs.getJobStatus(jobName);
        anyConnected ||= status.connected;
        observer.observe(leader, status.isLeader ? 1 : 0, { 'elasticjob.job.name': jobName });
        observer.observe(owned, status.shardingItems.length, { 'elasticjob.job.name': jobName });
      }
      observer.observe(connected, anyConnected ? 1 : 0);
      const stats = this.jobs.getZookeeperStats();
      observer.observe(requests, stats.reads, { 'elasticjob.zookeeper.request': 'read' });
      observer.observe(requests, stats.writes, { 'elasticjob.zookeeper.request': 'write' });
      observer.observe(requests, stats.watchRequests, { 'elasticjob.zookeeper.request': 'watch' });
    };
    const observables = [leader, owned, connected, requests];
    meter.addBatchObservableCallback(observe, observables);
    this.removeObservers = () => meter.removeBatchObservableCallback(observe, observables);

    this.removeInterceptor = this.jobs.useItemInterceptor((context: ShardingContext, next) =>
      tracer.startActiveSpan(
        `elastic-job ${context.jobName}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            'elasticjob.job.name': context.jobName,
            'elasticjob.sharding.item': context.shardingItem,
            'elasticjob.sharding.total': context.shardingTotalCount,
            'elasticjob.task.id': context.taskId,
          },
        },
        async (span) => {
          try {
            return await next();
          } catch (error) {
            span.recordException(error instanceof Error ? error : String(error));
            span.setStatus({
              code: SpanStatusCode.ERROR,
              message: error instanceof Error ? error.message : String(error),
            });
            throw error;
          } finally {
            span.end();
          }
        },
      ),
    );
  }

  /** After the jobs' own shutdown (onModuleDestroy), so that items ending during it are still counted. */
  onApplicationShutdown(): void {
    this.subscription?.unsubscribe();
    this.removeObservers?.();
    this.removeInterceptor?.();
  }
}
