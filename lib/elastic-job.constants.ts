export const SHARDED_JOB_METADATA = 'nestjs-elastic-job:sharded_job';
/** ElasticJob's delimiter in instance ids and task ids. */
export const INSTANCE_DELIMITER = '@-@';
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;
