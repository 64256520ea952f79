import { Inject, Injectable, Logger, type InjectionToken, type Type } from '@nestjs/common';
import type { ClientProxy } from '@nestjs/microservices';
import { timeout, type Subscription } from 'rxjs';
import { ShardedJob } from '../decorators/sharded-job.decorator.js';
import { DependencyUnavailableError, InvalidOperationError } from '../errors/elastic-job.errors.js';
import { OutageLog } from '../util/outage-log.js';
import { positiveTimer } from './microservice-options.js';
import type { ShardedJobOptions } from '../interfaces/sharded-job-options.interface.js';
import type { ShardingContext } from '../interfaces/sharding-context.interface.js';

/**
 * What Nest's clients reject a send with while their broker is away, as text, not as an Error (@nestjs/microservices
 * client/client-nats.js, client-redis.js, client-mqtt.js and client-rmq.js on a disconnect).
 */
const NEST_CONNECTION_LOST = 'Error: Connection lost. Trying to reconnect...';

/**
 * The transport's own trouble (the broker away, the connection refused or closed, nobody subscribed), as its text: an
 * Error from the client other than our timeout, or Nest's text for a lost connection. Undefined for a worker's error
 * answer (its RpcException's payload, or Nest's `{ status: 'error' }` for what it threw: a plain object or another
 * text) and for a reply that did not come in time (a slow worker is the item's failure, not an outage).
 */
function transportTrouble(error: unknown): string | undefined {
  if (error instanceof Error) return error.name === 'TimeoutError' ? undefined : error.message;
  return error === NEST_CONNECTION_LOST ? 'connection lost' : undefined;
}

/** A worker's error answer as the item's Error: its message, or what came back. */
function workerError(error: unknown, pattern: string, item: number): Error {
  const detail =
    typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string'
      ? (error as { message: string }).message
      : typeof error === 'string'
        ? error
        : JSON.stringify(error);
  return new Error(`'${pattern}' for item ${item} failed: ${detail}`);
}

/**
 * One outage log per client and pattern, shared by the transport jobs that send it: a reply on one pattern says
 * nothing of another's workers (none may listen there), so their outages are told apart.
 */
const OUTAGES = new WeakMap<object, Map<string, OutageLog>>();

function outageOf(proxy: ClientProxy, client: InjectionToken, pattern: string): OutageLog {
  let byPattern = OUTAGES.get(proxy);
  if (!byPattern) OUTAGES.set(proxy, (byPattern = new Map()));
  let outage = byPattern.get(pattern);
  if (!outage) {
    const dependency = `'${pattern}' through client ${describeToken(client)}`;
    byPattern.set(pattern, (outage = new OutageLog(new Logger('ElasticJob:transport'), dependency, 'item(s)')));
  }
  return outage;
}

function describeToken(token: InjectionToken): string {
  return typeof token === 'function' ? token.name : `'${String(token)}'`;
}

/** What a worker receives for one item: the ShardingContext's fields, without its signal, logger and reportProgress. */
export type TransportItem = Omit<ShardingContext, 'signal' | 'logger' | 'reportProgress'>;

/**
 * The item's fields only: a spread of the context would read its logger (making the item's kept-lines entry for
 * nothing) and send the logger object over the wire.
 */
function transportItem(context: ShardingContext): TransportItem {
  const { jobName, taskId, shardingTotalCount, jobParameter, shardingItem, shardingParameter, attempt } = context;
  return { jobName, taskId, shardingTotalCount, jobParameter, shardingItem, shardingParameter, attempt };
}

export interface TransportJobOptions extends ShardedJobOptions {
  /** The `ClientProxy` the items are sent through: the name given to `ClientsModule.register()`. */
  client: InjectionToken;
  /** The pattern workers answer with `@MessagePattern()`. */
  pattern: string;
  /** How long an item may wait for its reply (each value of it); then it fails, as any failed item. Default 60 000. */
  timeoutMilliseconds?: number;
}

/**
 * A job whose items are done by microservice workers (docs/guide/microservices.md, "Transport jobs"): each item of a
 * firing is sent with `client.send(pattern, item)` and its reply (or error) is the item's result. The firing, sharding,
 * misfire and failover rules are those of any job; the instance that owns an item waits for its reply, and its signal
 * (session lost, shutdown timeout) stops the wait (the worker is not told, and may still finish). The job's identity in
 * ZooKeeper is 'TRANSPORT' (as ElasticJob's typed jobs store their type), unless `jobClass` says otherwise. Returns a
 * provider class for the `providers` of the module that imports ElasticJobModule and registers the client.
 * @publicApi
 */
export function transportJob(options: TransportJobOptions): Type<unknown> {
  const jobName = String(options?.jobName);
  const fail = (field: string, detail: string): never => {
    throw new InvalidOperationError(`transportJob '${jobName}'`, field, detail);
  };
  if (!options || typeof options !== 'object') fail('options', 'transportJob() needs an options object');
  const { client, pattern, timeoutMilliseconds = 60_000, ...jobOptions } = options;
  if (client === undefined || client === null) fail('client', 'is required: the ClientProxy token');
  if (typeof pattern !== 'string' || pattern.trim() === '' || pattern !== pattern.trim())
    fail('pattern', "is required, a string without surrounding spaces: the workers' message pattern");
  const problem = positiveTimer(timeoutMilliseconds);
  if (problem) fail('timeoutMilliseconds', problem);

  @Injectable()
  class TransportJobProvider {
    constructor(@Inject(client) readonly proxy: ClientProxy) {}

    // Its identity in the job's root node, as ElasticJob's typed jobs (HTTP, SCRIPT) store their type: stable when
    // the pattern or the client changes.
    @ShardedJob({ ...jobOptions, jobClass: jobOptions.jobClass ?? 'TRANSPORT' })
    run(context: ShardingContext): Promise<unknown> {
      const { signal } = context;
      const item = transportItem(context);
      if (typeof (this.proxy as Partial<ClientProxy> | undefined)?.send !== 'function')
        return Promise.reject(
          new InvalidOperationError(`transportJob '${jobName}'`, 'client', `${String(client)} is not a ClientProxy`),
        );
      return new Promise((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason);
        let reply: unknown;
        let subscription: Subscription | undefined = undefined;
        const onAbort = (): void => {
          subscription?.unsubscribe(); // stops waiting for the reply (the worker is not told)
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        subscription = this.proxy
          .send<unknown, TransportItem>(pattern, item)
          .pipe(timeout(timeoutMilliseconds))
          .subscribe({
            next: (value) => (reply = value),
            error: (error: unknown) => {
              signal.removeEventListener('abort', onAbort);
              if (error instanceof Error && error.name === 'TimeoutError')
                return reject(
                  new Error(`no reply to '${pattern}' for item ${item.shardingItem} in ${timeoutMilliseconds} ms`),
                );
              const outage = outageOf(this.proxy, client, pattern);
              const trouble = transportTrouble(error);
              if (trouble === undefined) {
                outage.recovered(); // a worker answered, if only with an error
                return reject(workerError(error, pattern, item.shardingItem));
              }
              // Said as a failure in the transport: a request that went out may still have reached a worker.
              const message = `'${pattern}' for item ${item.shardingItem} failed in the transport: ${trouble}`;
              outage.failed(trouble, 'its items fail until it answers; each is reported as an item event');
              reject(new DependencyUnavailableError(outage.dependency, message, { cause: error }));
            },
            complete: () => {
              signal.removeEventListener('abort', onAbort);
              outageOf(this.proxy, client, pattern).recovered();
              resolve(reply);
            },
          });
      });
    }
  }
  Object.defineProperty(TransportJobProvider, 'name', { value: `TransportJob(${jobName})` });
  return TransportJobProvider;
}
