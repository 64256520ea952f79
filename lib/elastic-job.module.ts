import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ElasticJobExplorer } from './elastic-job.explorer.js';
import { ElasticJobConfigurableModule } from './elastic-job.module-definition.js';
import { ElasticJobOrchestrator } from './elastic-job.orchestrator.js';
import { ElasticJobRegistry } from './elastic-job.registry.js';
import { ElasticJobOperator } from './lifecycle/elastic-job-operator.js';

/**
 * `ElasticJobModule.forRoot({ zookeeper: { serverLists, namespace } })` or `forRootAsync({...})`: discovers
 * `@ShardedJob()` methods and runs them sharded across every instance of the app. @publicApi
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    ElasticJobExplorer,
    ElasticJobOrchestrator,
    ElasticJobRegistry,
    {
      // The operator API on the app's session (see ElasticJobOrchestrator.operatorRegistry).
      provide: ElasticJobOperator,
      useFactory: (orchestrator: ElasticJobOrchestrator) =>
        ElasticJobOperator.over(() => orchestrator.operatorRegistry()),
      inject: [ElasticJobOrchestrator],
    },
  ],
  exports: [ElasticJobRegistry, ElasticJobOperator],
})
export class ElasticJobModule extends ElasticJobConfigurableModule {}
