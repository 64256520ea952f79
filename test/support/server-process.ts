import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

/**
 * Starts a throwaway server of the test harness (PostgreSQL, NATS, Redis) and resolves once it logs `ready` on
 * `logStream` (stderr unless told: Redis logs to stdout); rejects with its log when it exits first or takes longer
 * than `timeoutMs`.
 */
export async function startServer(
  name: string,
  command: string,
  args: readonly string[],
  ready: string,
  timeoutMs: number,
  options: SpawnOptions = {},
  logStream: 'stdout' | 'stderr' = 'stderr',
): Promise<ChildProcess> {
  const server = spawn(command, args, {
    ...options,
    stdio: ['ignore', logStream === 'stdout' ? 'pipe' : 'ignore', logStream === 'stderr' ? 'pipe' : 'ignore'],
  });
  const logged = server[logStream]!;
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start in ${timeoutMs} ms:\n${log}`)), timeoutMs);
    logged.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes(ready)) {
        clearTimeout(timer);
        resolve();
      }
    });
    server.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}:\n${log}`));
    });
  });
  logged.resume();
  return server;
}

/** Stops a server started by startServer() with `signal`, and resolves when it has exited. */
export async function stopServer(server: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!server || server.exitCode !== null || server.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    server.once('exit', () => resolve());
    server.kill(signal);
  });
}
