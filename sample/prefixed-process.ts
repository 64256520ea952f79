import { spawn, type ChildProcess } from 'node:child_process';

const COLORS = ['\u001b[36m', '\u001b[35m', '\u001b[33m', '\u001b[32m'];
const RESET = '\u001b[0m';

/**
 * A sample process (`node <script>`), its stdout and stderr printed line by line under its name in a color of its
 * own; `onLine` sees every line (what the sample's summary is made of).
 */
export function startPrefixed(options: {
  name: string;
  /** Picks the color: the n-th process of the sample. */
  index: number;
  /** The column the names are padded to. */
  width: number;
  script: string;
  env: NodeJS.ProcessEnv;
  onLine?: (line: string) => void;
}): ChildProcess {
  const { name, index, width, script, env, onLine } = options;
  const child = spawn(process.execPath, [script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let buffer = '';
  const onData = (chunk: Buffer): void => {
    buffer += chunk.toString('utf8');
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      process.stdout.write(`${COLORS[index % COLORS.length]}${name.padEnd(width)}${RESET}| ${line}\n`);
      onLine?.(line);
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  return child;
}
