import { describeError } from '../../errors/elastic-job.errors.js';
import type { TreeEvent } from '../../registry/tree-cache.js';
import type { JobContext } from './job-context.js';

/**
 * How this instance reacts to one concern's changes in the job's tree, as ElasticJob has one listener manager per
 * concern (`kernel/internal/{concern}/{Name}ListenerManager.java` in ElasticJob's source). Each handler lives in the
 * folder of its concern and checks the paths it reacts to itself; ClusterChangeListeners hands every event to each.
 * (Not the job listeners that run before and after a firing.)
 */
export interface ClusterChangeHandler {
  /** Its view of the configuration, and whether the instance is registering (for a handler that needs to know). */
  start?(registering: boolean): void;
  /** The registration has done what it set out to. */
  registered?(): void;
  /** One change of the job's tree (from its TreeCache). Synchronous: any I/O goes through runReaction. */
  onChange(event: TreeEvent): void;
  /** The job has stopped (its teardown): let go of whatever waits for a later event. */
  close?(): void;
}

/**
 * Runs a reaction's I/O on its own: reactions run concurrently (each is single-flight or idempotent) so that none
 * waits behind another; a failure is logged with what was being done.
 */
export function runReaction(ctx: JobContext, what: string, action: () => Promise<void>): void {
  void action().catch((error: unknown) => ctx.logger.warn(`${what} failed: ${describeError(error)}`));
}
