import { execFile } from 'node:child_process';
import type { ShardingContext } from '../../interfaces/sharding-context.interface.js';
import type { JobItemExecutor } from './item-executor.js';
import { shardingContextJson } from './sharding-context-json.js';

/** The output of a script kept in its item's result or failure (each stream's last characters). */
export const MAX_SCRIPT_OUTPUT_CHARACTERS = 4096;

/** Which commands an app lets SCRIPT jobs run: none (the default), any, or these (as written first on the line). */
export type ScriptPolicy = { allow: false } | { allow: true } | { allow: readonly string[] };

/** What a SCRIPT item resolves with. */
export interface ScriptItemResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * A command line split into words as a POSIX shell would, without running one: spaces separate words, single quotes
 * keep everything, double quotes keep everything but `\"` and `\\`, a backslash outside quotes keeps the next
 * character. No expansion, no pipes, no redirection: `execFile` gets the words as they are. Throws on an unclosed
 * quote.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unclosed ' at character ${i + 1}`);
      word += line.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\' && (line[j + 1] === '"' || line[j + 1] === '\\')) j++;
        word += line[j];
      }
      if (j >= line.length) throw new Error(`unclosed " at character ${i + 1}`);
      inWord = true;
      i = j;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/**
 * ElasticJob's SCRIPT job type (its `ecosystem/executor/script` ScriptJobExecutor), each item one run of the job's
 * `script.command.line` prop (docs/guide/http-and-script-jobs.md): without a shell (`execFile`, the line split into
 * words as a shell would), the item's context as JSON appended as the last argument, as ElasticJob appends it. A
 * non-zero exit fails the item, with the end of its stderr. Killed (SIGTERM, then SIGKILL 5 s later) when the item's
 * signal aborts (shutdown, session loss) or at `script.timeout.milliseconds` when given. Runs only a command the
 * app's `scriptJobs` policy allows: whoever can write the config node could otherwise run anything on every instance.
 */
export class ScriptItemExecutor implements JobItemExecutor {
  readonly type = 'SCRIPT';

  constructor(
    /** The job's current properties (read at each item). */
    private readonly props: () => Readonly<Record<string, string>>,
    private readonly policy: ScriptPolicy,
  ) {}

  async execute(context: ShardingContext): Promise<ScriptItemResult> {
    const props = this.props();
    const fail = (detail: string): never => {
      throw new Error(`SCRIPT job: ${detail}`);
    };
    const line = props['script.command.line'];
    if (!line) fail(`props 'script.command.line' is required (the command each item runs)`);
    let words: string[] = [];
    try {
      words = splitCommandLine(line!);
    } catch (error) {
      fail(`props 'script.command.line' cannot be split into words: ${(error as Error).message}`);
    }
    if (words.length === 0) fail(`props 'script.command.line' is empty`);
    const [command, ...args] = words as [string, ...string[]];
    if (!scriptAllowed(this.policy, command))
      fail(
        `'${command.slice(0, 200)}' is not a command this app lets SCRIPT jobs run (ElasticJobModule scriptJobs: ` +
          `${JSON.stringify(this.policy.allow)}); nothing was run`,
      );
    const timeoutRaw = props['script.timeout.milliseconds'];
    const timeoutMs = timeoutRaw === undefined || timeoutRaw === '' ? 0 : Number(timeoutRaw);
    if (!Number.isInteger(timeoutMs) || timeoutMs < 0)
      fail(`props 'script.timeout.milliseconds' must be an integer >= 0, got '${timeoutRaw}'`);
    const shardingContext = shardingContextJson(context);
    return new Promise<ScriptItemResult>((resolve, reject) => {
      let stdout = '';
      let stderr = '';
      const keep = (kept: string, chunk: string): string => (kept + chunk).slice(-MAX_SCRIPT_OUTPUT_CHARACTERS);
      const child = execFile(command, [...args, shardingContext], {
        signal: context.signal,
        killSignal: 'SIGTERM',
        ...(timeoutMs > 0 ? { timeout: timeoutMs } : {}),
        // Read as it comes and kept bounded here: execFile's own buffer would kill a chatty script.
        maxBuffer: Number.POSITIVE_INFINITY,
        windowsHide: true,
      });
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout = keep(stdout, chunk)));
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = keep(stderr, chunk)));
      // A script that ignores SIGTERM is killed 5 s after it.
      const hardKill = (): void => void setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      context.signal.addEventListener('abort', hardKill, { once: true });
      child.on('error', (error: NodeJS.ErrnoException) => {
        if (error.name === 'AbortError') return; // told at 'close', with how it ended
        context.signal.removeEventListener('abort', hardKill);
        reject(new Error(`SCRIPT job: '${command.slice(0, 200)}' could not run: ${error.message}`));
      });
      child.on('close', (code, signal) => {
        context.signal.removeEventListener('abort', hardKill);
        if (code === 0) return resolve({ exitCode: 0, stdout, stderr });
        const how = signal
          ? `was killed (${signal}${context.signal.aborted ? ': the item was aborted' : timeoutMs > 0 ? `, after ${timeoutMs} ms at most` : ''})`
          : `exited with ${code}`;
        reject(
          new Error(`SCRIPT job: '${command.slice(0, 200)}' ${how}${stderr ? `; stderr: ${stderr.trimEnd()}` : ''}`),
        );
      });
    });
  }
}

/** Whether the policy lets a SCRIPT job run `command` (its first word, compared as written). */
export function scriptAllowed(policy: ScriptPolicy, command: string): boolean {
  if (policy.allow === true) return true;
  if (policy.allow === false) return false;
  return policy.allow.includes(command);
}
