import type { Writable } from 'node:stream';

/** The CLI's two streams; writes resolve once the text is handed to the OS, so nothing is lost at exit. */
export class CliOutput {
  constructor(
    private readonly stdout: Writable & { isTTY?: boolean },
    private readonly stderr: Writable,
  ) {}

  /** A terminal: watch mode redraws in place there, and appends otherwise. */
  get isTerminal(): boolean {
    return this.stdout.isTTY === true;
  }

  out(text: string): Promise<void> {
    return write(this.stdout, text);
  }

  err(text: string): Promise<void> {
    return write(this.stderr, text);
  }
}

function write(stream: Writable, text: string): Promise<void> {
  return new Promise((resolve, reject) => stream.write(text, (error) => (error ? reject(error) : resolve())));
}
