import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { runCli as runCliInThisProcess } from '../../lib/cli/run.js';
import { CHILD_NODE_FLAGS, LineProcess } from './line-process.js';
import { zkConnect } from './zk.js';

/** The CLI as compiled by the test setup (tsc -p tsconfig.json), run as npx runs the package's bin. */
const MAIN = 'build/lib/cli/main.js';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** From spawn to exit. */
  ms: number;
}

/** The test process's environment without ZK_CONNECT: the CLI's fallback to it is tested on purpose only. */
function environment(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { ZK_CONNECT: _ignored, ...env } = process.env;
  return { ...env, ...extra };
}

/** Runs the CLI to its end (asynchronously: apps in this process keep their sessions meanwhile). */
export function runCli(args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CHILD_NODE_FLAGS, MAIN, ...args], {
      env: environment(extraEnv),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

/**
 * One command line run in this process, through the function `main.js` calls with the process's own streams
 * (lib/cli/run.ts): the commands' behaviour, output and exit code, without a Node process to start for each (a
 * process loads the whole library: forty of them were a tenth of the suite's CPU). What only a process has (argv,
 * the exit status, the environment, Ctrl-C) is tested with runCli and startCliOn.
 */
export async function runCliHere(args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const started = Date.now();
  let stdout = '';
  let stderr = '';
  const sink = (append: (text: string) => void): Writable =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        append(chunk.toString('utf8'));
        done();
      },
    });
  const code = await runCliInThisProcess(args, {
    stdout: sink((text) => (stdout += text)),
    stderr: sink((text) => (stderr += text)),
    env: environment(extraEnv),
  });
  return { code, stdout, stderr, ms: Date.now() - started };
}

/** A command on the test's ZooKeeper and a namespace, run in this process (runCliHere). */
export function cliOn(namespace: string, ...args: string[]): Promise<CliResult> {
  return runCliHere(['--zk', zkConnect(), '--namespace', namespace, ...args]);
}

/** A long-running CLI (watch mode) whose stdout lines can be awaited. */
export function startCliOn(namespace: string, ...args: string[]): LineProcess {
  return new LineProcess(
    process.execPath,
    [...CHILD_NODE_FLAGS, MAIN, '--zk', zkConnect(), '--namespace', namespace, ...args],
    environment({}),
    process.env.CLUSTER_ECHO === '1',
  );
}

/** A table's rows as cells (columns are two or more spaces apart), the header row first. */
export function tableRows(text: string): string[][] {
  return text
    .trimEnd()
    .split('\n')
    .map((line) => line.split(/ {2,}/));
}

/** Where each column starts in the header: every row's cell must start there (aligned). */
export function misalignedRows(text: string): string[] {
  const [header, ...rows] = text.trimEnd().split('\n');
  const starts = [...header!.matchAll(/\S+/g)].map((match) => match.index);
  return rows.filter((row) =>
    starts.some((start) => start > 0 && start < row.length && (row[start - 1] !== ' ' || row[start] === ' ')),
  );
}
