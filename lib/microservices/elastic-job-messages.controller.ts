import { Controller, Logger, type Type } from '@nestjs/common';
import { MessagePattern, Payload, RpcException } from '@nestjs/microservices';
import { describeError, InvalidOperationError, JobNotFoundError, quoteInput } from '../errors/elastic-job.errors.js';
import { errorPayload, isHiddenFromCaller, type ElasticJobErrorPayload } from '../errors/error-payload.js';
import { ElasticJobOperator } from '../lifecycle/elastic-job-operator.js';
import type { OperationTarget } from '../lifecycle/lifecycle.types.js';
import {
  checkItemNumber,
  checkJobName,
  checkJobParameter,
  checkKeys,
  checkServerIp,
  checkWorkflowNode,
} from '../lifecycle/operator-input.js';
import { DEFAULT_PREFIX } from './microservice-options.js';

/** What the patterns take: the job, and for some the server IP or the item. */
export interface ElasticJobMessage {
  jobName?: string;
  ip?: string;
  item?: number;
  /** `trigger` only: the job parameter of that run. */
  jobParameter?: string;
  /** The workflow patterns: the workflow's name (docs/guide/workflows.md). */
  workflow?: string;
  /** `workflow-rerun-step`, `workflow-cancel`: the run's id. */
  runId?: string;
  /** `workflow-rerun-step`: its failed items (default) or all of them. */
  items?: 'failed' | 'all';
}

/**
 * The error an `RpcException` carries back to the caller (docs/operations/errors.md, "Errors of the operator's
 * surfaces"): the typed error's class name, its code, and its message, bounded and naming no other job.
 */
export type ElasticJobRpcError = ElasticJobErrorPayload;

export interface ElasticJobMessagesOptions {
  /** Prefix of every pattern: `{prefix}.jobs`, `{prefix}.trigger`... Default 'elastic-job'. */
  prefix?: string;
}

/** The operation names, each answered at `{prefix}.{name}`, with the payload fields each takes. */
const MESSAGE_FIELDS = {
  jobs: [],
  job: ['jobName'],
  sharding: ['jobName'],
  trigger: ['jobName', 'jobParameter'],
  disable: ['jobName', 'ip'],
  enable: ['jobName', 'ip'],
  'disable-item': ['jobName', 'item'],
  'enable-item': ['jobName', 'item'],
  'rerun-item': ['jobName', 'item'],
  'workflow-trigger': ['workflow'],
  'workflow-runs': ['workflow'],
  'workflow-rerun-step': ['workflow', 'runId', 'jobName', 'items'],
  'workflow-cancel': ['workflow', 'runId'],
  workflows: [],
} as const satisfies Record<string, ReadonlyArray<keyof ElasticJobMessage>>;

export type ElasticJobMessageName = keyof typeof MESSAGE_FIELDS;

export const ELASTIC_JOB_MESSAGE_NAMES = Object.keys(MESSAGE_FIELDS) as readonly ElasticJobMessageName[];

/**
 * The payload as the pattern takes it: an object with only that pattern's fields, each through the operator's checks
 * (operator-input.ts) under the name the caller gave it. `jobs` takes no fields (an absent payload too).
 */
function payloadOf(operation: string, name: ElasticJobMessageName, message: unknown): ElasticJobMessage {
  if (name === 'jobs' && (message === undefined || message === null)) return {};
  if (typeof message !== 'object' || message === null || Array.isArray(message))
    throw new InvalidOperationError(
      operation,
      'payload',
      `must be an object${name === 'jobs' ? '' : ` { ${MESSAGE_FIELDS[name].join(', ')} }`}, got ${quoteInput(message)}`,
    );
  checkKeys(message, MESSAGE_FIELDS[name], operation);
  return message as ElasticJobMessage;
}

function jobNameOf(operation: string, message: ElasticJobMessage): string {
  if (message.jobName === undefined) throw new InvalidOperationError(operation, 'jobName', 'is required');
  return checkJobName(message.jobName, operation);
}

function itemOf(operation: string, message: ElasticJobMessage): number {
  if (message.item === undefined) throw new InvalidOperationError(operation, 'item', 'is required');
  return checkItemNumber(message.item, operation);
}

function workflowOf(operation: string, message: ElasticJobMessage): string {
  if (message.workflow === undefined) throw new InvalidOperationError(operation, 'workflow', 'is required');
  return checkWorkflowNode(message.workflow, operation, 'name', 'workflow');
}

function runIdOf(operation: string, message: ElasticJobMessage): string {
  if (message.runId === undefined) throw new InvalidOperationError(operation, 'runId', 'is required');
  return checkWorkflowNode(message.runId, operation, 'runId');
}

function targetOf(operation: string, message: ElasticJobMessage): OperationTarget {
  if (message.jobName === undefined && message.ip === undefined)
    throw new InvalidOperationError(operation, 'jobName', 'give jobName, ip, or both');
  return {
    ...(message.jobName === undefined ? {} : { jobName: checkJobName(message.jobName, operation) }),
    ...(message.ip === undefined ? {} : { serverIp: checkServerIp(message.ip, operation, 'ip') }),
  };
}

/**
 * A controller answering the operator API as message patterns (docs/guide/microservices.md), over whatever transports
 * the app is connected to: `{prefix}.jobs`, `.job`, `.sharding`, `.trigger`, `.disable`, `.enable`,
 * `.disable-item`, `.enable-item`, `.rerun-item` (and the workflows': `.workflow-trigger`, `.workflow-runs`,
 * `.workflow-rerun-step`, `.workflow-cancel`, `.workflows`), with payloads `{ jobName, ip?, item?, jobParameter? }` (each pattern takes only its
 * own fields, checked as the operator API checks them). Errors come back as `RpcException`s carrying
 * `{ name, code, message, registryCode? }` (ElasticJobRpcError), the same on every transport. Add the class it returns to a module's `controllers`.
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
  const logger = new Logger('ElasticJob:messages');
  /** The pattern's work with its payload checked; any failure as the RpcException of its payload. */
  const run = async <T>(
    name: ElasticJobMessageName,
    message: unknown,
    action: (operation: string, payload: ElasticJobMessage) => Promise<T>,
  ): Promise<T> => {
    const operation = `${prefix}.${name}`;
    try {
      return await action(operation, payloadOf(operation, name, message));
    } catch (error) {
      if (isHiddenFromCaller(error)) logger.error(`${operation} failed: ${describeError(error)}`);
      throw new RpcException(errorPayload(error));
    }
  };

  @Controller()
  class ElasticJobMessagesController {
    constructor(readonly operator: ElasticJobOperator) {}

    @MessagePattern(`${prefix}.jobs`)
    jobs(@Payload() message: unknown) {
      return run('jobs', message, () => this.operator.getAllJobsBriefInfo());
    }

    @MessagePattern(`${prefix}.job`)
    job(@Payload() message: unknown) {
      return run('job', message, async (operation, payload) => {
        const jobName = jobNameOf(operation, payload);
        const brief = await this.operator.getJobBriefInfo(jobName);
        if (!brief) throw new JobNotFoundError(jobName);
        return { ...brief, configuration: await this.operator.getJobConfiguration(jobName) };
      });
    }

    @MessagePattern(`${prefix}.sharding`)
    sharding(@Payload() message: unknown) {
      return run('sharding', message, (operation, payload) =>
        this.operator.getShardingInfo(jobNameOf(operation, payload)),
      );
    }

    @MessagePattern(`${prefix}.trigger`)
    trigger(@Payload() message: unknown) {
      return run('trigger', message, (operation, payload) => {
        const jobName = jobNameOf(operation, payload);
        const jobParameter = checkJobParameter(payload.jobParameter, operation);
        return this.operator.trigger(jobName, jobParameter === undefined ? {} : { jobParameter });
      });
    }

    @MessagePattern(`${prefix}.disable`)
    disable(@Payload() message: unknown) {
      return run('disable', message, (operation, payload) => this.operator.disable(targetOf(operation, payload)));
    }

    @MessagePattern(`${prefix}.enable`)
    enable(@Payload() message: unknown) {
      return run('enable', message, (operation, payload) => this.operator.enable(targetOf(operation, payload)));
    }

    @MessagePattern(`${prefix}.disable-item`)
    disableItem(@Payload() message: unknown) {
      return run('disable-item', message, async (operation, payload) => {
        const [jobName, item] = [jobNameOf(operation, payload), itemOf(operation, payload)];
        await this.operator.disableItem(jobName, item);
        return { jobName, item, disabled: true };
      });
    }

    @MessagePattern(`${prefix}.enable-item`)
    enableItem(@Payload() message: unknown) {
      return run('enable-item', message, async (operation, payload) => {
        const [jobName, item] = [jobNameOf(operation, payload), itemOf(operation, payload)];
        await this.operator.enableItem(jobName, item);
        return { jobName, item, disabled: false };
      });
    }

    @MessagePattern(`${prefix}.rerun-item`)
    rerunItem(@Payload() message: unknown) {
      return run('rerun-item', message, (operation, payload) =>
        this.operator.rerunItem(jobNameOf(operation, payload), itemOf(operation, payload)),
      );
    }

    @MessagePattern(`${prefix}.workflow-trigger`)
    workflowTrigger(@Payload() message: unknown) {
      return run('workflow-trigger', message, async (operation, payload) => {
        const workflow = workflowOf(operation, payload);
        return { workflow, runId: await this.operator.triggerWorkflow(workflow) };
      });
    }

    @MessagePattern(`${prefix}.workflow-runs`)
    workflowRuns(@Payload() message: unknown) {
      return run('workflow-runs', message, (operation, payload) =>
        this.operator.getWorkflowRuns(workflowOf(operation, payload)),
      );
    }

    @MessagePattern(`${prefix}.workflow-rerun-step`)
    workflowRerunStep(@Payload() message: unknown) {
      return run('workflow-rerun-step', message, (operation, payload) => {
        const [workflow, runId, jobName] = [
          workflowOf(operation, payload),
          runIdOf(operation, payload),
          jobNameOf(operation, payload),
        ];
        if (payload.items !== undefined && payload.items !== 'failed' && payload.items !== 'all')
          throw new InvalidOperationError(
            operation,
            'items',
            `must be 'failed' or 'all', got ${quoteInput(payload.items)}`,
          );
        return this.operator.rerunWorkflowStep(workflow, runId, jobName, payload.items ? { items: payload.items } : {});
      });
    }

    @MessagePattern(`${prefix}.workflow-cancel`)
    workflowCancel(@Payload() message: unknown) {
      return run('workflow-cancel', message, (operation, payload) =>
        this.operator.cancelWorkflowRun(workflowOf(operation, payload), runIdOf(operation, payload)),
      );
    }

    @MessagePattern(`${prefix}.workflows`)
    workflows(@Payload() message: unknown) {
      return run('workflows', message, () => this.operator.getWorkflows());
    }
  }
  return ElasticJobMessagesController;
}
