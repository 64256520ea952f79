/**
 * `nestjs-elastic-job/terminus`: the @nestjs/terminus health indicator, in its own entry point so that apps without
 * @nestjs/terminus never load it.
 * @module nestjs-elastic-job/terminus
 */
export { ElasticJobHealthIndicator, type JobHealthDetails } from './elastic-job.health-indicator.js';
