import { describeError, registryErrorCode } from '../../errors/elastic-job.errors.js';
import type {
  ExecutionHistoryQuery,
  ExecutionLines,
  ExecutionRecord,
} from '../../interfaces/execution-history.interface.js';
import type { TreeEvent } from '../../registry/tree-cache.js';
import {
  decodeQuery,
  encodeLinesReply,
  encodeProgressReply,
  encodeReply,
  type ExecutionQueryRequest,
} from '../../tracing/execution-query-wire.js';
import type { ItemProgress } from '../../interfaces/sharding-context.interface.js';
import type { JobContext } from '../context/job-context.js';
import { runReaction, type ClusterChangeHandler } from '../context/cluster-change-handler.js';

/** This process's execution log, as a reply reads it. */
export interface ExecutionLogReader {
  query(query: ExecutionHistoryQuery): ExecutionRecord[];
  /** An execution's kept lines (docs/guide/item-policies.md, "Item logs"). */
  lines?(executionId: string): ExecutionLines | undefined;
  /** Files an execution's kept lines as its item logs them. */
  keepLines?(executionId: string, lines: ExecutionLines): void;
}

/** The latest progress of the job's items running here (the executor's). */
export type ProgressReader = () => ReadonlyMap<number, { value: ItemProgress; at: number }>;

/**
 * Answers an execution-history query (docs/guide/console.md, "Execution history without a database"):
 * `executions/query-{id}` added naming this instance → its in-memory log's matching executions, of every job of the
 * process, written beside it as `executions/reply-{id}~{me}` (ephemeral; the asker reads and deletes it). A query
 * that cannot be read is left alone with a warning naming it: it is the asker's, who deletes it at its deadline.
 */
export class ExecutionQueryReactions implements ClusterChangeHandler {
  constructor(
    private readonly ctx: JobContext,
    private readonly log: ExecutionLogReader | undefined,
    private readonly progress?: ProgressReader,
  ) {}

  onChange(event: TreeEvent): void {
    if (event.type !== 'ADDED' || (this.log === undefined && this.progress === undefined)) return;
    const id = this.ctx.paths.executionQueryIdOf(event.path);
    if (id === undefined) return;
    const { log } = this;
    runReaction(this.ctx, 'execution history query', async () => {
      const text = await this.ctx.storage.direct.get(event.path);
      if (text === undefined) return; // answered and deleted already
      let request;
      try {
        request = decodeQuery(text);
      } catch (error) {
        this.ctx.logger.warn(
          `${this.ctx.storage.fullPath(event.path)} is not an execution-history query (${describeError(error)}): ` +
            'not answered',
        );
        return;
      }
      if (!request.instances.includes(this.ctx.instanceId)) return;
      const reply = this.reply(request, log);
      if (reply === undefined) return;
      try {
        // Only beside its query: an asker that gave up and deleted it gets no reply left behind.
        await this.ctx.storage.createUncachedEphemeral(
          this.ctx.paths.executionReply(id, this.ctx.instanceId),
          reply,
          event.path,
        );
      } catch (error) {
        // The asker gave up and deleted its query (NO_NODE is its parent), or asked twice: nothing to do.
        if (registryErrorCode(error) !== 'NODE_EXISTS' && registryErrorCode(error) !== 'NO_NODE') throw error;
      }
    });
  }

  /** The reply to what is asked; undefined when this instance keeps nothing of that kind (its log is off). */
  private reply(request: ExecutionQueryRequest, log: ExecutionLogReader | undefined): Buffer | undefined {
    switch (request.kind) {
      case 'lines':
        return log?.lines ? encodeLinesReply(log.lines(request.executionId!)) : undefined;
      case 'progress':
        return this.progress ? encodeProgressReply(this.progress()) : undefined;
      default:
        return log ? encodeReply(log.query({ ...request.query, offset: 0 })) : undefined;
    }
  }
}
