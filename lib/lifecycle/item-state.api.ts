import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { describeError, JobNotFoundError, registryErrorCode } from '../errors/elastic-job.errors.js';
import type { ExecutionLines } from '../interfaces/execution-history.interface.js';
import type { ItemProgress } from '../interfaces/sharding-context.interface.js';
import { JobNodePath } from '../job/paths.js';
import { createWhileJobExists } from '../job/storage/create-while-job-exists.js';
import type { RegistryCenter } from '../registry/registry-center.js';
import {
  decodeLinesReply,
  decodeProgressReply,
  encodeQuery,
  type ExecutionQueryRequest,
} from '../tracing/execution-query-wire.js';
import { NamespaceReader } from './namespace-reader.js';

/** How often the asker looks for replies while it waits. */
const POLL_MS = 50;

/** One execution's kept lines, and where they came from. */
export interface ExecutionLinesAnswer {
  /** Undefined when no instance asked keeps lines of that execution (none logged, pushed out, or it left). */
  lines: ExecutionLines | undefined;
  /** The instance whose lines these are. */
  instanceId: string | undefined;
  /** Instances asked that did not answer in time (Java peers never do). */
  missing: string[];
}

/**
 * What only a running instance knows of its items, asked on demand through the job's `executions/` node as the
 * execution history is (cluster-executions.api.ts, docs/guide/item-policies.md): one execution's kept log lines, the
 * latest progress of its running items. An instance writes nothing for an item's progress or lines until asked; a
 * question costs one query node, one reply per instance asked, and their deletion.
 */
export class ItemStateApi {
  private readonly read: NamespaceReader;

  constructor(private readonly registry: RegistryCenter) {
    this.read = new NamespaceReader(registry);
  }

  /** One execution's kept lines, asked of `instances` (default: the job's online instances). */
  async lines(
    jobName: string,
    executionId: string,
    instances: readonly string[] | undefined,
    timeoutMs: number,
  ): Promise<ExecutionLinesAnswer> {
    const asked = instances ?? (await this.instances(jobName, 'getExecutionLines'));
    let found: { lines: ExecutionLines; instanceId: string } | undefined;
    const { missing } = await this.ask(
      jobName,
      { instances: [...asked], query: { limit: 1 }, kind: 'lines', executionId },
      timeoutMs,
      (instanceId, text) => {
        const lines = decodeLinesReply(text);
        if (lines !== undefined && found === undefined) found = { lines, instanceId };
        // The instance that has them answered: the others need not be waited for.
        return lines !== undefined;
      },
    );
    return { lines: found?.lines, instanceId: found?.instanceId, missing: found ? [] : missing };
  }

  /** The latest progress of the job's running items on `instances`, by item. */
  async progress(
    jobName: string,
    instances: readonly string[],
    timeoutMs: number,
  ): Promise<Map<number, { value: ItemProgress; at: Date; instanceId: string }>> {
    const found = new Map<number, { value: ItemProgress; at: Date; instanceId: string }>();
    if (instances.length === 0) return found;
    await this.ask(
      jobName,
      { instances: [...instances], query: { limit: 1 }, kind: 'progress' },
      timeoutMs,
      (id, text) => {
        for (const [item, progress] of decodeProgressReply(text))
          found.set(item, { value: progress.value, at: new Date(progress.at), instanceId: id });
        return false;
      },
    );
    return found;
  }

  private async instances(jobName: string, operation: string): Promise<string[]> {
    const paths = await this.read.requireJob(jobName, operation);
    return this.read.children(paths.instances);
  }

  /**
   * Writes the query (ephemeral) under the job, reads the replies of the instances it names until all came, `done`
   * says enough, or the deadline passed; deletes the query and the replies whatever happens.
   */
  private async ask(
    jobName: string,
    request: ExecutionQueryRequest,
    timeoutMs: number,
    take: (instanceId: string, text: string) => boolean,
  ): Promise<{ missing: string[] }> {
    const paths = new JobNodePath(jobName);
    const id = randomUUID();
    const waiting = new Set(request.instances);
    try {
      if (waiting.size === 0) return { missing: [] };
      try {
        await createWhileJobExists(this.registry, paths, [{ path: paths.executions }]);
        await this.registry.create(paths.executionQuery(id), encodeQuery(request), 'EPHEMERAL');
      } catch (error) {
        if (registryErrorCode(error) === 'NO_NODE') throw new JobNotFoundError(jobName);
        throw error;
      }
      const deadline = Date.now() + timeoutMs;
      let enough = false;
      while (waiting.size > 0 && !enough) {
        const children = (await this.registry.getChildren(paths.executions)) ?? [];
        for (const child of children) {
          const prefix = `reply-${id}~`;
          const instanceId = child.slice(prefix.length);
          if (!child.startsWith(prefix) || !waiting.delete(instanceId)) continue;
          const node = await this.registry.getData(paths.executionReply(id, instanceId));
          if (!node) continue;
          try {
            if (take(instanceId, node.data.toString('utf8'))) enough = true;
          } catch (error) {
            new Logger('ElasticJob:operator').warn(
              `refusing the reply /${this.registry.namespace}${paths.executionReply(id, instanceId)}: ` +
                describeError(error),
            );
          }
        }
        if (enough || waiting.size === 0 || Date.now() >= deadline) break;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      return { missing: enough ? [] : [...waiting].sort() };
    } finally {
      // The query first: a reply is written only beside its query, so none comes after this.
      await this.registry.remove(paths.executionQuery(id)).catch(() => undefined);
      const children = (await this.registry.getChildren(paths.executions).catch(() => undefined)) ?? [];
      await Promise.all(
        children
          .filter((child) => child.startsWith(`reply-${id}~`))
          .map((child) => this.registry.remove(`${paths.executions}/${child}`).catch(() => undefined)),
      );
    }
  }
}
