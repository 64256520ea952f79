import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ElasticJobExplorer } from './elastic-job.explorer.js';
import { ElasticJobConfigurableModule } from './elastic-job.module-definition.js';
import { ElasticJobOrchestrator } from './elastic-job.orchestrator.js';
import { ElasticJobRegistry } from './elastic-job.registry.js';

/**
 * `ElasticJobModule.forRoot({ zookeeper: { serverLists, namespace } })` or `forRootAsync({...})`: discovers
 * `@ShardedJob()` methods and runs them sharded across every instance of the app. @publicApi
 */
@Module({
  imports: [DiscoveryModule],
  providers: [ElasticJobExplorer, ElasticJobOrchestrator, ElasticJobRegistry],
  exports: [ElasticJobRegistry],
})
export class ElasticJobModule extends ElasticJobConfigurableModule {}
