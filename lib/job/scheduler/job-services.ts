import { Logger } from '@nestjs/common';
import { JobConfigurationError } from '../../errors/elastic-job.errors.js';
import type { RegistryCenter } from '../../registry/registry-center.js';
import { fiveFieldReading } from '../../schedule/cron-expression.js';
import { CronTrigger } from '../../schedule/cron-trigger.js';
import { PreparationLead, preparationLead } from '../../schedule/preparation-lead.js';
import { ConfigService } from '../config/config.service.js';
import { LeaderService } from '../election/leader.service.js';
import { JobEventPublisher } from '../events/job-event-publisher.js';
import { DataflowItemExecutor } from '../plugins/dataflow-item-executor.js';
import { ExecutionService } from '../execution/execution.service.js';
import { JobExecutor } from '../executor/job-executor.js';
import { FailoverService } from '../failover/failover.service.js';
import { GuaranteeService } from '../guarantee/guarantee.service.js';
import { InstanceService } from '../instance/instance.service.js';
import type { JobContext } from '../context/job-context.js';
import { buildInstanceId, JobNodePath } from '../paths.js';
import { JobPlugins } from '../plugins/job-plugins.js';
import { RescheduleReactions } from '../config/reschedule-reactions.js';
import { ElectionReactions } from '../election/election-reactions.js';
import { ExecutionReactions } from '../execution/execution-reactions.js';
import { FailoverReactions } from '../failover/failover-reactions.js';
import { ShutdownReactions } from '../instance/shutdown-reactions.js';
import { ClusterChangeListeners } from '../reaction/cluster-change-listeners.js';
import { ShardingReactions } from '../sharding/sharding-reactions.js';
import { triggerAllInstances } from '../trigger/trigger-all-instances.js';
import { ExecutionQueryReactions } from '../history/execution-query-reactions.js';
import { RerunReactions } from '../trigger/rerun-reactions.js';
import { typedItemExecutor } from '../plugins/typed-item-executors.js';
import { TriggerReactions } from '../trigger/trigger-reactions.js';
import { CoordinationEventWatcher } from '../reaction/coordination-event-watcher.js';
import { ReconcileService } from '../reconcile/reconcile.service.js';
import { ServerService } from '../server/server.service.js';
import { ShardingService } from '../sharding/sharding.service.js';
import { JobNodeStorage } from '../storage/job-node-storage.js';
import type { JobDefinition, JobIdentity, JobSchedulerSettings } from './job-definition.js';
import type { ItemLineBook } from '../policies/item-lines.js';

/** One job's coordination services on this instance (ElasticJob's kernel/internal services of one job). */
export interface JobServices {
  readonly ctx: JobContext;
  readonly config: ConfigService;
  readonly servers: ServerService;
  readonly instances: InstanceService;
  readonly leader: LeaderService;
  readonly execution: ExecutionService;
  readonly sharding: ShardingService;
  readonly failover: FailoverService;
  readonly reconcile: ReconcileService;
  readonly executor: JobExecutor;
  readonly guarantee: GuaranteeService;
  readonly coordinationEvents: CoordinationEventWatcher;
  /** The firing loop: the cron fires the executor (its firings prepared ahead of the instant: schedule/preparation-lead.ts). */
  readonly trigger: CronTrigger;
  /** The reactions to the cluster's changes, one handler per concern, in the folder of its concern. */
  readonly reactions: ClusterChangeListeners;
  /** How the job's 5-field cron was read, said when it starts firing (while that cron is the one in force). */
  readonly cronReading: { readonly cron: string; readonly note: string } | undefined;
  /** Fires the job now on every live instance (trigger/trigger-all-instances.ts); resolves with their ids. */
  triggerAll(jobParameter?: string): Promise<string[]>;
}

/** What the services call back into the job's scheduler for. */
export interface JobServiceHooks {
  /** Reconcile's look at this instance's own nodes. */
  checkOwnNodes(): Promise<void>;
  /** This instance's `instances/{id}` node was deleted. */
  onOwnInstanceDeleted(): Promise<void>;
}

/** The wiring of one job's services (and its firing loop), each given what it needs and no more. */
export function wireJobServices(
  definition: JobDefinition,
  registry: RegistryCenter,
  identity: JobIdentity,
  settings: JobSchedulerSettings,
  hooks: JobServiceHooks,
): JobServices {
  const { jobName } = definition.config;
  const paths = new JobNodePath(jobName);
  const logger = new Logger(`ElasticJob:${jobName}`);
  const instanceId = buildInstanceId(identity.ip, identity.pid);
  const ctx: JobContext = {
    jobName,
    paths,
    connection: registry,
    logger,
    storage: new JobNodeStorage(registry, paths, logger),
    instanceId,
    ip: identity.ip,
    waitTimeoutMs: settings.waitTimeoutMs,
    // The alert handlers read the job's current props (the config service, made below, holds them).
    plugins: new JobPlugins(logger, definition.plugins, definition.handler, () => config.load().props),
    events: new JobEventPublisher(settings.eventSink, { jobName, instanceId, ip: identity.ip }),
    preparationLead: settings.preparationLead ?? preparationLead,
  };
  const config = new ConfigService(ctx, definition.config, definition.owner, definition.joinsStored === true);
  const servers = new ServerService(ctx);
  const instances = new InstanceService(ctx, servers);
  const leader = new LeaderService(ctx, servers, () => instances.isLocalInstanceOnline());
  const execution = new ExecutionService(ctx, instances);
  const sharding = new ShardingService(ctx, leader, servers, instances, execution);
  const failover = new FailoverService(ctx, servers, instances);
  const reconcile = new ReconcileService(
    ctx,
    config,
    leader,
    sharding,
    () => hooks.checkOwnNodes(),
    settings.reconcileMinuteMs,
  );
  const type = definition.type ?? 'SIMPLE';
  const itemExecutor = definition.dataflow
    ? new DataflowItemExecutor(definition.dataflow.handler, definition.dataflow.streaming, () =>
        sharding.isNeedSharding(),
      )
    : (typedItemExecutor(type, () => config.load().props, settings.scriptPolicy) ?? ctx.plugins.itemExecutor(type));
  if (!itemExecutor)
    throw new JobConfigurationError(
      jobName,
      'type',
      `'${type}' is not a job type; one of: ${ctx.plugins.names().itemExecutors.join(', ')}`,
    );
  const executor = new JobExecutor(
    ctx,
    config,
    sharding,
    execution,
    failover,
    itemExecutor,
    settings.itemInterceptors,
    definition.maxConcurrentItems,
    settings.lineBook ?? (settings.executionLog?.keepLines ? (settings.executionLog as ItemLineBook) : undefined),
  );
  ctx.events.follow(executor.events);
  const trigger = new CronTrigger(
    definition.config.cron,
    definition.config.timeZone,
    (at) => executor.fire(at.getTime()),
    () => ctx.preparationLead.ms,
    PreparationLead.MAX_MS,
  );
  const reactions = new ClusterChangeListeners(ctx, [
    new ElectionReactions(ctx, leader),
    new ShardingReactions(ctx, config, leader, sharding),
    new ExecutionReactions(ctx, config, execution),
    // A config change is told in ElasticJob's order: item count, monitorExecution, failover, schedule.
    new FailoverReactions(ctx, config, failover, () => executor.failoverIfNecessary()),
    new RescheduleReactions(ctx, config, (changed) => trigger.reschedule(changed.cron, changed.timeZone)),
    new ShutdownReactions(ctx, instances, () => hooks.onOwnInstanceDeleted()),
    new TriggerReactions(ctx, (jobParameter) => executor.trigger(jobParameter)),
    new RerunReactions(ctx, (items, askedZxid) => executor.rerun(items, askedZxid)),
    new ExecutionQueryReactions(ctx, settings.executionLog, () => executor.progress()),
  ]);
  return {
    ctx,
    config,
    servers,
    instances,
    leader,
    execution,
    sharding,
    failover,
    reconcile,
    executor,
    guarantee: new GuaranteeService(ctx, servers),
    coordinationEvents: new CoordinationEventWatcher(ctx, config, leader, sharding),
    trigger,
    reactions,
    cronReading: cronReading(definition),
    triggerAll: (jobParameter) => triggerAllInstances(registry, paths, jobParameter),
  };
}

function cronReading(definition: JobDefinition): JobServices['cronReading'] {
  const note = fiveFieldReading(definition.writtenCron, definition.config.cron);
  return note === undefined ? undefined : { cron: definition.config.cron, note };
}
