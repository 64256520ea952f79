import type { ShardingContext } from '../../interfaces/sharding-context.interface.js';

/** What one alert says, composed once and sent by whichever handler. */
export interface AlertMessage {
  jobName: string;
  /** ElasticJob's text, then the item and the task, then what the throttle held back. */
  text: string;
}

/** The longest stack sent: robots refuse long messages (WeCom's text is cut further: http-alerts.ts). */
const MAX_STACK_CHARACTERS = 8000;

/**
 * ElasticJob's text (its *JobErrorHandler.java getErrorMessage: `Job '%s' exception occur in job processing, caused
 * by %s` with the stack as printStackTrace writes it), followed by the item and the task (whose id names the
 * instance), and by how many alerts of this kind were held back since the last one.
 */
export function alertMessage(
  jobName: string,
  error: unknown,
  context: Pick<ShardingContext, 'shardingItem' | 'taskId'>,
  heldBack: number,
  windowMs: number,
): AlertMessage {
  let stack = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
  if (error instanceof Error && error.cause !== undefined) {
    const cause = error.cause;
    stack += `\nCaused by: ${cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)}`;
  }
  if (stack.length > MAX_STACK_CHARACTERS) stack = `${stack.slice(0, MAX_STACK_CHARACTERS)}\n\t... (cut)`;
  let text =
    `Job '${jobName}' exception occur in job processing, caused by ${stack}\n` +
    `sharding item: ${context.shardingItem}, task: ${context.taskId}`;
  if (heldBack > 0)
    text +=
      `\n${heldBack} more alert${heldBack === 1 ? '' : 's'} of this kind ${heldBack === 1 ? 'was' : 'were'} held ` +
      `back since the last one (at most one each ${Math.round(windowMs / 1000)} s)`;
  return { jobName, text };
}
