import { HttpItemExecutor } from './http-item-executor.js';
import type { JobItemExecutor } from './item-executor.js';
import { ScriptItemExecutor, type ScriptPolicy } from './script-item-executor.js';

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
