/**
 * `nestjs-elastic-job`: distributed, sharded cron jobs for NestJS, coordinated through ZooKeeper with the model of
 * Apache ElasticJob-Lite. The integrations are entry points of their own (`nestjs-elastic-job/terminus`, ...).
 * @module nestjs-elastic-job
 */
export { ElasticJobModule } from './elastic-job.module.js';
export { ELASTIC_JOB_MODULE_OPTIONS, type ElasticJobOptionsFactory } from './elastic-job.module-definition.js';
export { ElasticJobRegistry, type RunJobOptions } from './elastic-job.registry.js';
export { ElasticJobOperator } from './lifecycle/elastic-job-operator.js';
export type { JobConfigurationChanges } from './lifecycle/job-configuration.api.js';
export type { OperatedNode } from './lifecycle/job-operate.api.js';
export type { ClusterExecutions } from './lifecycle/cluster-executions.api.js';
export type { ExecutionLinesAnswer } from './lifecycle/item-state.api.js';
export type { ExecutionLine, ExecutionLines, ExecutionLinesKeeper } from './interfaces/execution-history.interface.js';
export type { NamespaceChange } from './lifecycle/namespace-watch.js';
export type {
  ExecutionHistory,
  ExecutionHistoryQuery,
  ExecutionRecord,
  ExecutionResult,
} from './interfaces/execution-history.interface.js';
export type {
  JobBriefInfo,
  JobBriefStatus,
  JobServerInfo,
  OperationTarget,
  ServerBriefInfo,
  ShardingInfo,
  ShardingItemStatus,
} from './lifecycle/lifecycle.types.js';
export type { JobConfiguration } from './job/config/job-configuration.js';
export {
  TRACED_EVENT_TYPES,
  type TracedEvent,
  type ItemLinesRecord,
  type TraceSession,
  type TraceStore,
} from './tracing/trace-store.interface.js';
export { TraceWriter, type TraceWriterOptions } from './tracing/trace-writer.js';
export { TracingService, type TracedEventSource, type TracingServiceOptions } from './tracing/tracing-service.js';
export { ShardedJob } from './decorators/sharded-job.decorator.js';
export { DataflowJob } from './decorators/dataflow-job.decorator.js';
export type { DataflowJobHandler, DataflowJobOptions } from './interfaces/dataflow-job.interface.js';
export { OnElasticJobEvent } from './decorators/on-elastic-job-event.decorator.js';
export { ElasticJobListener } from './decorators/elastic-job-listener.decorator.js';
export type {
  DistributeOnceElasticJobListener,
  ElasticJobListenerOptions,
  ShardingContexts,
} from './interfaces/job-listener.interface.js';
export {
  ELASTIC_JOB_EVENT_TYPES,
  type ElasticJobEvent,
  type ElasticJobEventOf,
  type ElasticJobEventType,
  type ExecutionSource,
  type FailoverClaimedEvent,
  type FiringSkippedEvent,
  type ConfigurationChangedEvent,
  type ItemCompletedEvent,
  type ItemStartedEvent,
  type JobExecutionEvent,
  type JobStatusEvent,
  type JobStatusState,
  type LeadershipEvent,
  type MisfireFlaggedEvent,
  type SessionEvent,
  type ShardingAssignedEvent,
} from './events/elastic-job-event.types.js';
export { ElasticJobErrorHandler, ElasticJobShardingStrategy } from './decorators/job-plugin.decorators.js';
export type {
  ElasticJobModuleCommonOptions,
  ElasticJobModuleOptions,
  TypedJobOptions,
  ZookeeperConfiguration,
} from './interfaces/module-options.interface.js';
export type { HttpItemResult } from './job/plugins/http-item-executor.js';
export type { ScriptItemResult } from './job/plugins/script-item-executor.js';
export type {
  ErrorHandlerType,
  JobErrorHandler,
  JobInstance,
  JobShardingStrategy,
  ShardedJobOptions,
  ShardingStrategyType,
} from './interfaces/sharded-job-options.interface.js';
export type { ShardingContext } from './interfaces/sharding-context.interface.js';
export type { ItemProgress } from './interfaces/sharding-context.interface.js';
export type { ItemRetryOptions } from './interfaces/sharded-job-options.interface.js';
export type { Wire } from './util/wire.js';
export type { ItemInterceptor } from './interfaces/item-interceptor.interface.js';
export type { ItemCompletion, JobHealth, JobStatus } from './job/scheduler/job-scheduler.js';
export type { JobStop } from './job/scheduler/job-lifecycle.js';
export { describeCron, type CronDescription, type DescribeCronOptions } from './schedule/cron-preview.js';
export { AVG_ALLOCATION, ODEVITY, ROUND_ROBIN } from './job/plugins/sharding-strategies.js';
export {
  CoordinationTimeoutError,
  CronExpressionError,
  DependencyUnavailableError,
  ElasticJobError,
  InvalidOperationError,
  JobConfigurationError,
  JobConflictError,
  JobExecutionError,
  JobNotFoundError,
  RegistryError,
  ServerNotFoundError,
  WorkflowNotFoundError,
} from './errors/elastic-job.errors.js';
export { ItemCoveredError, ItemTimeoutError } from './errors/elastic-job.errors.js';
export {
  CLIENT_MESSAGE_LIMIT,
  ELASTIC_JOB_ERROR_CODES,
  errorCodeOf,
  errorPayload,
  type ElasticJobErrorCode,
  type ElasticJobErrorPayload,
} from './errors/error-payload.js';
export { MAX_JOB_NAME_LENGTH, MAX_JOB_PARAMETER_BYTES } from './lifecycle/operator-input.js';
export type { WorkflowOptions } from './interfaces/workflow-options.interface.js';
export type { WorkflowEvent } from './events/elastic-job-event.types.js';
export type { WorkflowRun, WorkflowRunState, WorkflowStepRun, WorkflowStepState } from './workflow/workflow-run.js';
