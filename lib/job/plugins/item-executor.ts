import type { ShardingContext } from '../../interfaces/sharding-context.interface.js';

export type JobHandler = (context: ShardingContext) => unknown;

/**
 * Runs one sharding item of a firing: ElasticJob's JobItemExecutor, chosen by the job's type. The firing loop
 * (JobExecutor) knows only this interface, so other job types (dataflow, transport jobs) plug in here.
 */
export interface JobItemExecutor {
  /** The job type it serves, e.g. 'SIMPLE'. */
  readonly type: string;
  /** Resolves with the item's result; rejects with its failure (handed to the job's error handler). */
  execute(context: ShardingContext): Promise<unknown>;
}

/** ElasticJob's SIMPLE type: the decorated method, called once per item. */
export class SimpleItemExecutor implements JobItemExecutor {
  readonly type = 'SIMPLE';

  constructor(private readonly handler: JobHandler) {}

  /**
   * The handler's promise itself, or its value (or failure) as one: what an async function would give, without its
   * frame and second promise (a thousand jobs' items at one instant, issue 43).
   */
  execute(context: ShardingContext): Promise<unknown> {
    try {
      const result = this.handler(context);
      return result instanceof Promise ? result : Promise.resolve(result);
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }
}

/** The job types built in, by name, each made from the job's handler. */
export const BUILT_IN_ITEM_EXECUTORS: Readonly<Record<string, (handler: JobHandler) => JobItemExecutor>> = {
  SIMPLE: (handler) => new SimpleItemExecutor(handler),
};
