import type { RegistryCenter } from '../registry/registry-center.js';
import { ClusterExecutionsApi } from './cluster-executions.api.js';
import { ItemStateApi } from './item-state.api.js';
import { JobConfigurationApi } from './job-configuration.api.js';
import { JobOperateApi } from './job-operate.api.js';
import { JobStatisticsApi } from './job-statistics.api.js';
import { ServerStatisticsApi } from './server-statistics.api.js';
import { ShardingOperateApi } from './sharding-operate.api.js';
import { ShardingStatisticsApi } from './sharding-statistics.api.js';
import { WorkflowOperateApi } from './workflow-operate.api.js';

/** ElasticJob's six lifecycle APIs, and this library's own, over one registry center (ElasticJobOperator's parts). */
export interface Apis {
  registry: RegistryCenter;
  jobStatistics: JobStatisticsApi;
  serverStatistics: ServerStatisticsApi;
  shardingStatistics: ShardingStatisticsApi;
  jobOperate: JobOperateApi;
  shardingOperate: ShardingOperateApi;
  jobConfiguration: JobConfigurationApi;
  clusterExecutions: ClusterExecutionsApi;
  itemState: ItemStateApi;
  workflows: WorkflowOperateApi;
}

export function lifecycleApis(registry: RegistryCenter): Apis {
  return {
    registry,
    jobStatistics: new JobStatisticsApi(registry),
    serverStatistics: new ServerStatisticsApi(registry),
    shardingStatistics: new ShardingStatisticsApi(registry),
    jobOperate: new JobOperateApi(registry),
    shardingOperate: new ShardingOperateApi(registry),
    jobConfiguration: new JobConfigurationApi(registry),
    clusterExecutions: new ClusterExecutionsApi(registry),
    itemState: new ItemStateApi(registry),
    workflows: new WorkflowOperateApi(registry),
  };
}
