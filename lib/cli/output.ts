import type { Writable } from 'node:stream';

/** The CLI's two streams; writes resolve once the text is handed to the OS, so nothing is lost at exit. */
export class CliOutput {
  constructor(
    private readonly stdout: Writable,
    private readonly stderr: Writable,
  ) {}

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
