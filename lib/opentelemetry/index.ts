/**
 * `nestjs-elastic-job/opentelemetry`: metrics and spans through @opentelemetry/api, in their own entry point so that
 * apps without it never load it.
 * @module nestjs-elastic-job/opentelemetry
 */
export { ElasticJobTelemetry, TELEMETRY_SCOPE } from './elastic-job-telemetry.js';
