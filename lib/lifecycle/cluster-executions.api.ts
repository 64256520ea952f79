import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { describeError, JobNotFoundError, registryErrorCode } from '../errors/elastic-job.errors.js';
import type { ExecutionHistoryQuery, ExecutionRecord } from '../interfaces/execution-history.interface.js';
import { JobNodePath } from '../job/paths.js';
import { createWhileJobExists } from '../job/storage/create-while-job-exists.js';
import type { RegistryCenter } from '../registry/registry-center.js';
import { mapBounded } from '../registry/request-limits.js';
import { matchesQuery, newestFirst } from '../tracing/execution-log.js';
import { decodeReply, encodeQuery } from '../tracing/execution-query-wire.js';
import { NamespaceReader } from './namespace-reader.js';

/** What the cluster's instances answered: their executions merged, and which instances did (not) answer in time. */
export interface ClusterExecutions {
  /** Newest first, the query's page of them. */
  executions: ExecutionRecord[];
  /** The instances whose logs are in the answer. */
  answered: string[];
  /**
   * Instances online that did not answer in time: busy, cut off, with the log off, or Java ElasticJob instances
   * (which keep no such log).
   */
  missing: string[];
}

/** How often the asker looks for replies while it waits. */
const POLL_MS = 50;
const READS_AT_ONCE = 16;

/**
 * The execution history of the whole cluster without a database (docs/guide/console.md, "Execution history without
 * a database"): every online instance keeps its recent executions in memory, and this asks them through ZooKeeper.
 * Each instance is asked once, under one job it runs: `executions/query-{id}` (ephemeral) names the instances asked
 * there, each writes `executions/reply-{id}~{instanceId}`; the asker reads the replies until all came or the
 * deadline passed, then deletes the query and the replies. Bounded: at most MAX_REPLY_BYTES a reply, the query's
 * `limit + offset` executions from each instance.
 */
export class ClusterExecutionsApi {
  private readonly read: NamespaceReader;

  constructor(private readonly registry: RegistryCenter) {
    this.read = new NamespaceReader(registry);
  }

  async query(query: ExecutionHistoryQuery, timeoutMs: number): Promise<ClusterExecutions> {
    const asked = await this.instancesByJob(query.jobName);
    const offset = query.offset ?? 0;
    const request = { ...query, offset: 0, limit: Math.min(offset + query.limit, 10_000) };
    const id = randomUUID();
    const records: ExecutionRecord[] = [];
    const answered: string[] = [];
    const written: string[] = [];
    try {
      await mapBounded(
        [...asked],
        async ([jobName, instances]) => {
          const paths = new JobNodePath(jobName);
          // Recorded first: whatever happens next, the finally below deletes it if it was made.
          written.push(paths.executionQuery(id));
          try {
            await createWhileJobExists(this.registry, paths, [{ path: paths.executions }]);
            await this.registry.create(
              paths.executionQuery(id),
              encodeQuery({ instances, query: request }),
              'EPHEMERAL',
            );
          } catch (error) {
            // A job removed meanwhile: its instances are asked nowhere, and count as missing.
            if (!(error instanceof JobNotFoundError) && registryErrorCode(error) !== 'NO_NODE') throw error;
          }
        },
        READS_AT_ONCE,
      );
      const waiting = new Map([...asked].flatMap(([jobName, instances]) => instances.map((i) => [i, jobName])));
      const deadline = Date.now() + timeoutMs;
      while (waiting.size > 0) {
        const jobs = [...new Set(waiting.values())];
        await mapBounded(
          jobs,
          async (jobName) => {
            const paths = new JobNodePath(jobName);
            const children = (await this.registry.getChildren(paths.executions)) ?? [];
            for (const child of children) {
              const prefix = `reply-${id}~`;
              if (!child.startsWith(prefix)) continue;
              const instanceId = child.slice(prefix.length);
              if (waiting.get(instanceId) !== jobName) continue;
              waiting.delete(instanceId);
              const path = paths.executionReply(id, instanceId);
              written.push(path);
              const node = await this.registry.getData(path);
              if (!node) continue;
              try {
                records.push(...decodeReply(node.data.toString('utf8')));
                answered.push(instanceId);
              } catch (error) {
                new Logger('ElasticJob:operator').warn(
                  `refusing the reply /${this.registry.namespace}${path}: ${describeError(error)}`,
                );
              }
            }
          },
          READS_AT_ONCE,
        );
        if (waiting.size === 0 || Date.now() >= deadline) break;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      const executions = records
        .filter((record) => matchesQuery(record, query))
        .sort(newestFirst)
        .slice(offset, offset + query.limit);
      return { executions, answered: answered.sort(), missing: [...waiting.keys()].sort() };
    } finally {
      // Replies first (their query is their asker's mark), each whether or not it was read.
      await Promise.all(written.reverse().map((path) => this.registry.remove(path).catch(() => undefined)));
      await this.removeLateReplies(asked, id);
    }
  }

  /** Every online instance once, under the first job (by name) it runs; only `jobName`'s when given. */
  private async instancesByJob(jobName: string | undefined): Promise<Map<string, string[]>> {
    const jobs =
      jobName === undefined ? await this.jobNames() : [(await this.read.requireJob(jobName, 'executions')).jobName];
    const lists = await mapBounded(
      jobs,
      async (job) => ({ job, instances: await this.read.children(new JobNodePath(job).instances) }),
      READS_AT_ONCE,
    );
    const seen = new Set<string>();
    const byJob = new Map<string, string[]>();
    for (const { job, instances } of lists) {
      const fresh = instances.filter((instance) => !seen.has(instance));
      for (const instance of fresh) seen.add(instance);
      if (fresh.length > 0) byJob.set(job, fresh);
    }
    return byJob;
  }

  private async jobNames(): Promise<string[]> {
    const names = await this.read.jobNames();
    const jobs = await mapBounded(
      names,
      async (name) => ((await this.read.exists(new JobNodePath(name).config)) ? name : undefined),
      READS_AT_ONCE,
    );
    return jobs.filter((name): name is string => name !== undefined);
  }

  /** Replies that came after the deadline: deleted too, so nothing of this query stays in the tree. */
  private async removeLateReplies(asked: Map<string, string[]>, id: string): Promise<void> {
    await mapBounded(
      [...asked.keys()],
      async (jobName) => {
        const paths = new JobNodePath(jobName);
        const children = (await this.registry.getChildren(paths.executions).catch(() => undefined)) ?? [];
        await Promise.all(
          children
            .filter((child) => child.startsWith(`reply-${id}~`))
            .map((child) => this.registry.remove(`${paths.executions}/${child}`).catch(() => undefined)),
        );
      },
      READS_AT_ONCE,
    );
  }
}
