import { Injectable } from '@nestjs/common';
import { context as otelContext, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ElasticJobRegistry, ShardedJob, type ShardingContext } from '../../lib/index.js';
import { ElasticJobTelemetry } from '../../lib/opentelemetry/index.js';
import { appOptions, bootApp } from '../support/app.js';
import { hold, releaseAll } from '../support/resources.js';
import { eventually, uniqueNamespace } from '../support/zk.js';

/**
 * Metrics and spans (`nestjs-elastic-job/opentelemetry`) read with the OpenTelemetry SDK's own in-memory reader and
 * exporter, installed as an app would install the SDK (global providers and an async context manager).
 */

class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const reader = new TestReader();
const spans = new InMemorySpanExporter();
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  contextManager.enable();
  otelContext.setGlobalContextManager(contextManager);
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
});

afterAll(() => {
  metrics.disable();
  trace.disable();
  otelContext.disable();
});

afterEach(async () => {
  await releaseAll();
});

const parentsSeen: Array<string | undefined> = [];

@Injectable()
class MeteredJob {
  @ShardedJob({ jobName: 'metered', cron: '* * * * * *', shardingTotalCount: 2 })
  async run(context: ShardingContext): Promise<void> {
    // The item's span is active here: a span the handler makes is its child.
    const child = trace.getTracer('app').startSpan('handler work');
    parentsSeen.push(trace.getActiveSpan()?.spanContext().spanId);
    child.end();
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (context.shardingItem === 1) throw new Error('item 1 fails');
  }
}

type Point = { attributes: Record<string, unknown>; value: unknown };

async function points(name: string): Promise<Point[]> {
  const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics };
  return resourceMetrics.scopeMetrics
    .filter((scope) => scope.scope.name === 'nestjs-elastic-job')
    .flatMap((scope) => scope.metrics)
    .filter((metric) => metric.descriptor.name === name)
    .flatMap((metric) => metric.dataPoints as Point[]);
}

const sum = (found: Point[], match: Record<string, unknown>): number =>
  found
    .filter((point) => Object.entries(match).every(([key, value]) => point.attributes[key] === value))
    .reduce(
      (total, point) =>
        total + (typeof point.value === 'number' ? point.value : (point.value as { count: number }).count),
      0,
    );

describe('OpenTelemetry metrics and spans', () => {
  it('counts executions by result, times items and lateness, gauges leadership and connection, spans each item', async () => {
    const app = await bootApp(appOptions(uniqueNamespace('telemetry')), [MeteredJob, ElasticJobTelemetry]);
    hold(() => app.close());
    const registry = app.get(ElasticJobRegistry);
    await eventually(
      () => points('elasticjob.item.executions'),
      (found) => sum(found, { 'elasticjob.execution.result': 'failure' }) >= 2,
      15_000,
      'two cron firings',
    );
    const executions = await points('elasticjob.item.executions');
    const job = { 'elasticjob.job.name': 'metered' };
    expect(sum(executions, { ...job, 'elasticjob.execution.result': 'success' })).toBeGreaterThanOrEqual(2);
    expect(sum(executions, { ...job, 'elasticjob.execution.source': 'NORMAL_TRIGGER' })).toBeGreaterThanOrEqual(4);
    expect(sum(await points('elasticjob.item.duration'), job)).toBeGreaterThanOrEqual(4); // histogram counts
    expect(sum(await points('elasticjob.firing.lateness'), job)).toBeGreaterThanOrEqual(4);
    expect(sum(await points('elasticjob.leader'), job)).toBe(1);
    expect(sum(await points('elasticjob.items.owned'), job)).toBe(2);
    expect(sum(await points('elasticjob.zookeeper.connected'), {})).toBe(1);
    expect(sum(await points('elasticjob.reshards'), job)).toBe(1);
    const writes = sum(await points('elasticjob.zookeeper.requests'), { 'elasticjob.zookeeper.request': 'write' });
    expect(writes).toBeGreaterThan(0);
    expect(writes).toBeLessThanOrEqual(registry.getZookeeperStats().writes); // read at collection, a moment ago

    const finished = spans.getFinishedSpans().filter((span) => span.name === 'elastic-job metered');
    expect(finished.length).toBeGreaterThanOrEqual(4);
    const failed = finished.find((span) => span.attributes['elasticjob.sharding.item'] === 1)!;
    expect(failed.status).toMatchObject({ code: 2, message: 'item 1 fails' }); // SpanStatusCode.ERROR
    expect(failed.events.map((event) => event.name)).toContain('exception');
    const ok = finished.find((span) => span.attributes['elasticjob.sharding.item'] === 0)!;
    expect(ok.attributes).toMatchObject({ 'elasticjob.job.name': 'metered', 'elasticjob.sharding.total': 2 });
    // The handler ran inside the item's span: its active span was one of ours.
    const ours = new Set(finished.map((span) => span.spanContext().spanId));
    expect(parentsSeen.length).toBeGreaterThanOrEqual(4);
    expect(parentsSeen.every((spanId) => spanId !== undefined && ours.has(spanId))).toBe(true);
  });
});
