import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { ElasticJobModuleOptions } from './interfaces/module-options.interface.js';

/** Implement this to build the options with `forRootAsync({ useClass })`. @publicApi */
export interface ElasticJobOptionsFactory {
  createElasticJobOptions(): ElasticJobModuleOptions | Promise<ElasticJobModuleOptions>;
}

export const {
  ConfigurableModuleClass: ElasticJobConfigurableModule,
  MODULE_OPTIONS_TOKEN: ELASTIC_JOB_MODULE_OPTIONS,
  OPTIONS_TYPE: ELASTIC_JOB_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: ELASTIC_JOB_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<ElasticJobModuleOptions>({ moduleName: 'ElasticJob' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createElasticJobOptions')
  .setExtras({ isGlobal: false }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
