import { JobNotFoundError } from '../../errors/elastic-job.errors.js';
import type { JobBriefInfo } from '../../lifecycle/lifecycle.types.js';
import type { CommandContext } from './command.js';

/**
 * The job's brief info, or the JobNotFoundError the operations throw: reads of an unknown job resolve empty in the
 * API, but on the command line a mistyped name must fail, not print nothing.
 */
export async function requireJob(context: CommandContext, jobName: string): Promise<JobBriefInfo> {
  const info = await context.operator.getJobBriefInfo(jobName);
  if (info === undefined) throw new JobNotFoundError(jobName);
  return info;
}
