import { JobConfigurationError } from '../../errors/elastic-job.errors.js';
import type { TypedJobOptions } from '../../interfaces/module-options.interface.js';
import type { ShardedJobOptions } from '../../interfaces/sharded-job-options.interface.js';
import { HttpItemExecutor } from './http-item-executor.js';
import type { JobItemExecutor } from './item-executor.js';
import { scriptAllowed, ScriptItemExecutor, splitCommandLine, type ScriptPolicy } from './script-item-executor.js';

/** ElasticJob's typed job types: defined by their props, with no handler (docs/guide/http-and-script-jobs.md). */
export const TYPED_JOB_TYPES = ['HTTP', 'SCRIPT'] as const;
export type TypedJobType = (typeof TYPED_JOB_TYPES)[number];

export function isTypedJobType(type: unknown): type is TypedJobType {
  return (TYPED_JOB_TYPES as readonly unknown[]).includes(type);
}

/** The item executor of a typed job, reading the job's current props at each item; undefined for other types. */
export function typedItemExecutor(
  type: string,
  props: () => Readonly<Record<string, string>>,
  policy: ScriptPolicy = { allow: false },
): JobItemExecutor | undefined {
  if (type === 'HTTP') return new HttpItemExecutor(props);
  if (type === 'SCRIPT') return new ScriptItemExecutor(props, policy);
  return undefined;
}

/** A joining typed job's cron until the stored one is read: once a year, and never written anywhere. */
const JOIN_PLACEHOLDER_CRON = '0 0 0 1 1 ?';

/**
 * A typed job's options as a job's: its type checked; declared by `{ jobName, type }` alone, it `joins` the stored job
 * (placeholders until that is read, never written); a SCRIPT job's command checked against this instance's policy.
 * A JobConfigurationError naming the field otherwise (`scriptJobs` when the policy refuses).
 */
export function prepareTypedJob(
  options: TypedJobOptions,
  policy: ScriptPolicy,
): { type: TypedJobType; options: ShardedJobOptions; joins: boolean } {
  const jobName = typeof options?.jobName === 'string' ? options.jobName : undefined;
  if (!isTypedJobType(options?.type))
    throw new JobConfigurationError(
      jobName,
      'type',
      `must be one of ${TYPED_JOB_TYPES.join(', ')} (a job with a handler is a @ShardedJob() method or addJob(options, ` +
        `handler)), got ${JSON.stringify(options?.type)}`,
    );
  const { type, ...declared } = options;
  // { jobName, type } alone: the job stored in ZooKeeper (a Java team's, say) is joined as it is, props included.
  // Its configuration here only fills the gaps until the stored one is read (it is never written).
  const joins = declared.cron === undefined && declared.shardingTotalCount === undefined && declared.oneOff !== true;
  if (joins && declared.overwrite === true)
    throw new JobConfigurationError(
      jobName,
      'overwrite',
      'a typed job declared with { jobName, type } only joins the stored configuration: it has none to overwrite it with',
    );
  const rest: ShardedJobOptions = joins
    ? { ...declared, cron: JOIN_PLACEHOLDER_CRON, shardingTotalCount: 1, overwrite: false }
    : // A missing count is refused by the validator, naming it.
      (declared as ShardedJobOptions);
  if (type === 'SCRIPT' && joins && policy.allow === false)
    throw new JobConfigurationError(
      jobName,
      'scriptJobs',
      `this instance runs no SCRIPT job (ElasticJobModule scriptJobs: false); allow its command with scriptJobs: ` +
        `{ allow: ['...'] } or { allow: true }. Instances that allow it run the job's items`,
    );
  if (type === 'SCRIPT' && !joins) {
    const line = rest.props?.['script.command.line'];
    let command: string | undefined;
    try {
      command = line ? splitCommandLine(line)[0] : undefined;
    } catch (error) {
      throw new JobConfigurationError(jobName, 'props.script.command.line', (error as Error).message);
    }
    if (!command)
      throw new JobConfigurationError(jobName, 'props.script.command.line', 'is required: the command each item runs');
    if (!scriptAllowed(policy, command))
      throw new JobConfigurationError(
        jobName,
        'scriptJobs',
        `this instance may not run '${command.slice(0, 200)}' (ElasticJobModule scriptJobs: ` +
          `${JSON.stringify(policy.allow)}); allow it with scriptJobs: { allow: ['${command.slice(0, 200)}'] } or ` +
          `{ allow: true }. Instances that allow it run the job's items`,
      );
  }
  return { type, options: rest, joins };
}
