/** Reflect-metadata keys of the decorators, read by the module's explorer. */
export const SHARDED_JOB_METADATA = 'nestjs-elastic-job:sharded_job';
export const ERROR_HANDLER_PROVIDER_METADATA = 'nestjs-elastic-job:error_handler_provider';
export const SHARDING_STRATEGY_PROVIDER_METADATA = 'nestjs-elastic-job:sharding_strategy_provider';
export const EVENT_SUBSCRIBER_METADATA = 'nestjs-elastic-job:event_subscriber';
export const JOB_LISTENER_METADATA = 'nestjs-elastic-job:job_listener';
export const DATAFLOW_JOB_METADATA = 'nestjs-elastic-job:dataflow_job';
