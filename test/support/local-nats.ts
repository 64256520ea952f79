import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { findFreePort } from '../../lib/devtools/local-zookeeper.js';
import { startServer, stopServer } from './server-process.js';

const NATS_SERVER = '/usr/sbin/nats-server';

/**
 * A throwaway NATS server for the microservice tests, from Debian's `nats-server` package (installed by .ci/run, or
 * here when missing and root), on a free loopback port. `stop()` and `start()` again keep the port: a broker going
 * away and coming back mid-run.
 */
export class LocalNats {
  private server: ChildProcess | undefined;

  private constructor(readonly port: number) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  static async create(): Promise<LocalNats> {
    ensureInstalled();
    const nats = new LocalNats(await findFreePort());
    await nats.start();
    return nats;
  }

  async start(): Promise<void> {
    if (this.server) return;
    this.server = await startServer(
      'nats-server',
      NATS_SERVER,
      ['-a', '127.0.0.1', '-p', String(this.port)],
      'Server is ready',
      20_000,
    );
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await stopServer(server, 'SIGKILL');
  }
}

function ensureInstalled(): void {
  if (existsSync(NATS_SERVER)) return;
  if (typeof process.getuid === 'function' && process.getuid() === 0) {
    process.stderr.write('[local-nats] installing Debian package: nats-server\n');
    execFileSync('sh', ['-c', 'apt-get update && apt-get install -y --no-install-recommends nats-server'], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (existsSync(NATS_SERVER)) return;
  }
  throw new Error('nats-server is not installed: sudo apt-get install nats-server');
}
