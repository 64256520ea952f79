// `nestjs-elastic-job/terminus`: the @nestjs/terminus health indicator, in its own entry point so that apps
// without @nestjs/terminus never load it.
export { ElasticJobHealthIndicator, type JobHealthDetails } from './elastic-job.health-indicator.js';
