/**
 * `nestjs-elastic-job/microservices`: the operator API as message patterns and the jobs' events through a transport, in
 * their own entry point so that apps without @nestjs/microservices never load it.
 * @module nestjs-elastic-job/microservices
 */
export {
  ELASTIC_JOB_MESSAGE_NAMES,
  elasticJobMessagesController,
  type ElasticJobMessage,
  type ElasticJobMessageName,
  type ElasticJobMessagesOptions,
  type ElasticJobRpcError,
} from './elastic-job-messages.controller.js';
export { ElasticJobTransportEvents, transportEvents, type TransportEventsOptions } from './transport-events.js';
export { transportJob, type TransportItem, type TransportJobOptions } from './transport-job.js';
