import { parseArgs } from 'node:util';
import { createServer } from 'node:net';
import { LocalZookeeper, serverDebianPackages } from '../devtools/local-zookeeper.js';
import { describeError } from '../errors/elastic-job.errors.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE } from './commands/cli-errors.js';
import type { CliOutput } from './output.js';
import { PROGRAM } from './usage.js';

export const LOCAL_ZOOKEEPER_USAGE = `Usage: ${PROGRAM} zookeeper [--port N]

Runs a throwaway ZooKeeper for development on 127.0.0.1 (Debian's libzookeeper-java, installed when missing and
run as root), prints its connect string, and removes it and its data on Ctrl-C.
`;

/**
 * `zookeeper [--port N]`: a local ZooKeeper until interrupted (the same server the library's own tests and sample
 * run). Resolves with the exit code once it is stopped.
 */
export async function runLocalZookeeper(
  argv: readonly string[],
  output: CliOutput,
  until: () => Promise<void>,
): Promise<number> {
  let port: number | undefined;
  try {
    const { values } = parseArgs({ args: [...argv], options: { port: { type: 'string' } }, strict: true });
    if (values.port !== undefined) {
      port = Number(values.port);
      if (!Number.isInteger(port) || port < 1 || port > 65535)
        throw new Error(`--port takes 1..65535, got '${values.port}'`);
    }
  } catch (error) {
    await output.err(`${PROGRAM}: ${describeError(error)}\n\n${LOCAL_ZOOKEEPER_USAGE}`);
    return EXIT_USAGE;
  }
  let zk: LocalZookeeper;
  try {
    // Another server on that port would answer for ours: refuse it first.
    if (port !== undefined && !(await portIsFree(port))) throw new Error(`port ${port} is in use: choose another`);
    // Sessions of up to 60 s, as the module's default asks for; the full JIT, as a server for hours wants.
    zk = await LocalZookeeper.start({
      port,
      tickTimeMs: 2000,
      maxSessionTimeoutMs: 60_000,
      fastStart: false,
      debianPackages: serverDebianPackages(),
    });
  } catch (error) {
    await output.err(`${PROGRAM}: could not start ZooKeeper: ${describeError(error)}\n`);
    return EXIT_FAILED;
  }
  await output.out(
    `ZooKeeper running at ${zk.connectString} (data in ${zk.dir}, removed on exit); Ctrl-C stops it.\n` +
      `export ZK_CONNECT=${zk.connectString}\n`,
  );
  await until();
  await zk.stop();
  await output.out('ZooKeeper stopped.\n');
  return EXIT_OK;
}

/** Whether a server may listen on 127.0.0.1:port now. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}
