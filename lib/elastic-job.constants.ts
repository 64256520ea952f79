export const SHARDED_JOB_METADATA = 'nestjs-elastic-job:sharded_job';
export const ELASTIC_JOB_REGISTRY_CENTER = Symbol('ELASTIC_JOB_REGISTRY_CENTER');
/** ElasticJob's delimiter in instance ids and task ids. */
export const INSTANCE_DELIMITER = '@-@';
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;
