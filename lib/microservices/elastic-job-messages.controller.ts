import { Controller, type Type } from '@nestjs/common';
import { MessagePattern, Payload, RpcException } from '@nestjs/microservices';
import { ElasticJobError, InvalidOperationError, JobNotFoundError } from '../errors/elastic-job.errors.js';
import { ElasticJobOperator } from '../lifecycle/elastic-job-operator.js';
import type { OperationTarget } from '../lifecycle/lifecycle.types.js';
import { DEFAULT_PREFIX } from './microservice-options.js';

/** What the patterns take: the job, and for some the server IP or the item. */
export interface ElasticJobMessage {
  jobName?: string;
  ip?: string;
  item?: number;
  /** `trigger` only: the job parameter of that run. */
  jobParameter?: string;
}

/** The error an `RpcException` carries back to the caller: the typed error's name and message. */
export interface ElasticJobRpcError {
  name: string;
  message: string;
}

export interface ElasticJobMessagesOptions {
  /** Prefix of every pattern: `{prefix}.jobs`, `{prefix}.trigger`... Default 'elastic-job'. */
  prefix?: string;
}

/** The operation names, each answered at `{prefix}.{name}`. */
export const ELASTIC_JOB_MESSAGE_NAMES = [
  'jobs',
  'job',
  'sharding',
  'trigger',
  'disable',
  'enable',
  'disable-item',
  'enable-item',
] as const;

function toRpc(error: unknown): RpcException {
  const payload: ElasticJobRpcError =
    error instanceof Error
      ? { name: error instanceof ElasticJobError ? error.name : 'Error', message: error.message }
      : { name: 'Error', message: String(error) };
  return new RpcException(payload);
}

function jobNameOf(operation: string, message: ElasticJobMessage | undefined): string {
  const jobName = message?.jobName;
  if (typeof jobName !== 'string' || jobName === '')
    throw new InvalidOperationError(operation, 'jobName', `is required, got ${JSON.stringify(jobName)}`);
  return jobName;
}

function itemOf(operation: string, message: ElasticJobMessage | undefined): number {
  const item = message?.item;
  if (typeof item !== 'number' || !Number.isInteger(item) || item < 0)
    throw new InvalidOperationError(operation, 'item', `must be an integer >= 0, got ${JSON.stringify(item)}`);
  return item;
}

function targetOf(operation: string, message: ElasticJobMessage | undefined): OperationTarget {
  const target: OperationTarget = {};
  if (message?.jobName !== undefined) target.jobName = jobNameOf(operation, message);
  if (message?.ip !== undefined) {
    if (typeof message.ip !== 'string' || message.ip === '')
      throw new InvalidOperationError(operation, 'ip', `must be a server IP, got ${JSON.stringify(message.ip)}`);
    target.serverIp = message.ip;
  }
  if (target.jobName === undefined && target.serverIp === undefined)
    throw new InvalidOperationError(operation, 'jobName', 'give jobName, ip, or both');
  return target;
}

/**
 * A controller answering the operator API as message patterns (README "Microservices"), over whatever transports
 * the app is connected to: `{prefix}.jobs`, `.job`, `.sharding`, `.trigger`, `.disable`, `.enable`,
 * `.disable-item`, `.enable-item`, with payloads `{ jobName, ip?, item? }`. Errors come back as `RpcException`s
 * carrying `{ name, message }` of the typed error. Add the class it returns to a module's `controllers`.
 * @publicApi
 */
export function elasticJobMessagesController(options: ElasticJobMessagesOptions = {}): Type<unknown> {
  const prefix = options?.prefix ?? DEFAULT_PREFIX;
  if (typeof prefix !== 'string' || prefix.trim() === '' || /\s/.test(prefix))
    throw new InvalidOperationError(
      'elasticJobMessagesController',
      'prefix',
      'must be a non-empty word, e.g. elastic-job',
    );
  const run = async <T>(action: () => Promise<T>): Promise<T> => {
    try {
      return await action();
    } catch (error) {
      throw toRpc(error);
    }
  };

  @Controller()
  class ElasticJobMessagesController {
    constructor(readonly operator: ElasticJobOperator) {}

    @MessagePattern(`${prefix}.jobs`)
    jobs() {
      return run(() => this.operator.getAllJobsBriefInfo());
    }

    @MessagePattern(`${prefix}.job`)
    job(@Payload() message: ElasticJobMessage) {
      return run(async () => {
        const jobName = jobNameOf('job', message);
        const brief = await this.operator.getJobBriefInfo(jobName);
        if (!brief) {
          const known = (await this.operator.getAllJobsBriefInfo()).map((job) => job.jobName);
          throw new JobNotFoundError(jobName, known, 'namespace');
        }
        return { ...brief, configuration: await this.operator.getJobConfiguration(jobName) };
      });
    }

    @MessagePattern(`${prefix}.sharding`)
    sharding(@Payload() message: ElasticJobMessage) {
      return run(() => this.operator.getShardingInfo(jobNameOf('sharding', message)));
    }

    @MessagePattern(`${prefix}.trigger`)
    trigger(@Payload() message: ElasticJobMessage) {
      return run(() => {
        const jobName = jobNameOf('trigger', message);
        const jobParameter = message?.jobParameter;
        if (jobParameter !== undefined && typeof jobParameter !== 'string')
          throw new InvalidOperationError(
            'trigger',
            'jobParameter',
            `must be a string, got ${JSON.stringify(jobParameter)}`,
          );
        return this.operator.trigger(jobName, jobParameter === undefined ? {} : { jobParameter });
      });
    }

    @MessagePattern(`${prefix}.disable`)
    disable(@Payload() message: ElasticJobMessage) {
      return run(() => this.operator.disable(targetOf('disable', message)));
    }

    @MessagePattern(`${prefix}.enable`)
    enable(@Payload() message: ElasticJobMessage) {
      return run(() => this.operator.enable(targetOf('enable', message)));
    }

    @MessagePattern(`${prefix}.disable-item`)
    disableItem(@Payload() message: ElasticJobMessage) {
      return run(async () => {
        await this.operator.disableItem(jobNameOf('disable-item', message), itemOf('disable-item', message));
        return { jobName: message.jobName, item: message.item, disabled: true };
      });
    }

    @MessagePattern(`${prefix}.enable-item`)
    enableItem(@Payload() message: ElasticJobMessage) {
      return run(async () => {
        await this.operator.enableItem(jobNameOf('enable-item', message), itemOf('enable-item', message));
        return { jobName: message.jobName, item: message.item, disabled: false };
      });
    }
  }
  return ElasticJobMessagesController;
}
