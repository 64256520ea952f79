import 'reflect-metadata';
import { Module, type Provider } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  ElasticJobModule,
  type ElasticJobModuleCommonOptions,
  type ElasticJobModuleOptions,
  type ZookeeperConfiguration,
} from '../../lib/index.js';
import { zkConnect } from './zk.js';

export function appOptions(
  namespace: string,
  overrides: Partial<ElasticJobModuleCommonOptions & { zookeeper: ZookeeperConfiguration }> = {},
): ElasticJobModuleCommonOptions & { zookeeper: ZookeeperConfiguration } {
  return {
    zookeeper: { serverLists: zkConnect(), namespace, sessionTimeoutMilliseconds: 4000 },
    shutdownTimeoutMilliseconds: 5000,
    ...overrides,
  };
}

/** Boots a Nest application context with ElasticJobModule and the given job providers. */
export async function bootApp(options: ElasticJobModuleOptions, providers: Provider[]): Promise<TestingModule> {
  @Module({ imports: [ElasticJobModule.forRoot(options)], providers })
  class TestAppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [TestAppModule] }).compile();
  await moduleRef.init();
  return moduleRef;
}
