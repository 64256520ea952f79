import { spawn, type ChildProcess } from 'node:child_process';

/**
 * V8 flags for the Node processes the tests start (the fixture apps, the CLI): no optimizing compiler. They live a
 * few seconds to a minute and do little work, and TurboFan's compiles were about a fifth of a start's CPU on the
 * 2-core machine (the CLI's --help 0.94 -> 0.70 CPU-s; a cluster-app instance's first 10 s 1.5 -> 1.2). What the code
 * does is V8's to keep the same in every tier; the apps users run keep the default.
 */
export const CHILD_NODE_FLAGS = ['--no-opt'];

/** A child process whose stdout lines can be awaited (event-driven, bounded). */
/** How much of a process's stderr is kept, to show when it exits unexpectedly. */
const STDERR_KEPT = 8192;

export class LineProcess {
  readonly lines: string[] = [];
  /** The end of what the process wrote to stderr (an uncaught error's stack, Node's warnings). */
  stderr = '';
  private readonly waiters = new Set<() => void>();
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;

  constructor(command: string, args: string[], env: NodeJS.ProcessEnv = process.env, echo = false) {
    this.child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let buffer = '';
    const onChunk = (chunk: Buffer): void => {
      buffer += chunk.toString('utf8');
      let index: number;
      while ((index = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, index);
        buffer = buffer.slice(index + 1);
        this.lines.push(line);
        if (echo) process.stderr.write(`[${this.child.pid}] ${line}\n`);
        for (const wake of [...this.waiters]) wake();
      }
    };
    this.child.stdout?.on('data', onChunk);
    this.child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-STDERR_KEPT);
      if (echo) process.stderr.write(chunk);
    });
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code) => {
        for (const wake of [...this.waiters]) wake();
        resolve(code);
      }),
    );
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Resolves with the first line (from `from` on) matching; rejects after `timeoutMs` with what was seen. */
  waitForLine(match: RegExp | ((line: string) => boolean), timeoutMs = 30_000, from = 0): Promise<string> {
    const test = typeof match === 'function' ? match : (line: string) => match.test(line);
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const found = this.lines.slice(from).find(test);
        if (found !== undefined) {
          finish();
          resolve(found);
        } else if (this.child.exitCode !== null || this.child.signalCode !== null) {
          finish();
          reject(
            new Error(
              `process ${this.pid} exited before printing ${String(match)}; last ` +
                `lines:\n${this.lines.slice(-20).join('\n')}`,
            ),
          );
        }
      };
      const finish = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      const timer = setTimeout(() => {
        finish();
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${String(match)}; last ` +
              `lines:\n${this.lines.slice(-20).join('\n')}`,
          ),
        );
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  send(line: string): void {
    this.child.stdin?.write(`${line}\n`);
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }

  /** Kills the process (SIGKILL unless told) and resolves once it has exited, with its exit code. */
  async stop(signal: NodeJS.Signals = 'SIGKILL'): Promise<number | null> {
    this.kill(signal);
    return this.exited;
  }
}
