import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ElasticJobExplorer } from './elastic-job.explorer.js';
import { ElasticJobEventBus } from './events/elastic-job-event-bus.js';
import { ELASTIC_JOB_MODULE_OPTIONS, ElasticJobConfigurableModule } from './elastic-job.module-definition.js';
import type { ElasticJobModuleOptions } from './interfaces/module-options.interface.js';
import { DEFAULT_ZOOKEEPER_SETTINGS } from './registry/zookeeper-settings.js';
import { ElasticJobOrchestrator } from './elastic-job.orchestrator.js';
import { ElasticJobRegistry } from './elastic-job.registry.js';
import { ElasticJobOperator } from './lifecycle/elastic-job-operator.js';
import { ElasticJobWorkflows } from './elastic-job.workflows.js';

/**
 * `ElasticJobModule.forRoot({ zookeeper: { serverLists, namespace } })` or `forRootAsync({...})`: discovers
 * `@ShardedJob()` methods and runs them sharded across every instance of the app. @publicApi
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    ElasticJobExplorer,
    ElasticJobEventBus,
    ElasticJobOrchestrator,
    ElasticJobRegistry,
    ElasticJobWorkflows,
    {
      // The operator API on the app's session (see ElasticJobOrchestrator.operatorRegistry).
      provide: ElasticJobOperator,
      useFactory: (orchestrator: ElasticJobOrchestrator, options: ElasticJobModuleOptions) =>
        ElasticJobOperator.over(
          () => orchestrator.operatorRegistry(),
          options?.zookeeper?.connectionTimeoutMilliseconds ?? DEFAULT_ZOOKEEPER_SETTINGS.connectionTimeoutMilliseconds,
        ),
      inject: [ElasticJobOrchestrator, ELASTIC_JOB_MODULE_OPTIONS],
    },
  ],
  exports: [ElasticJobRegistry, ElasticJobOperator, ElasticJobWorkflows],
})
export class ElasticJobModule extends ElasticJobConfigurableModule {}
