import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '../../lib/devtools/local-zookeeper.js';
import { startServer, stopServer } from './server-process.js';
import { ensureDebianPackage } from './debian-package.js';

const NATS_SERVER = '/usr/sbin/nats-server';

/**
 * A throwaway NATS server for the microservice tests, from Debian's `nats-server` package (installed by .ci/run, or
 * here when missing and root), on a free loopback port. `stop()` and `start()` again keep the port: a broker going
 * away and coming back mid-run.
 */
export class LocalNats {
  private server: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    /** A config file of the server's, when options need one. */
    private readonly configFile?: string,
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** `maxPayloadBytes`: the largest message the server takes (its default is 1 MB, too small for a 1 MB field). */
  static async create(options: { maxPayloadBytes?: number } = {}): Promise<LocalNats> {
    ensureInstalled();
    let configFile: string | undefined;
    if (options.maxPayloadBytes !== undefined) {
      configFile = join(mkdtempSync(join(tmpdir(), 'local-nats-')), 'nats.conf');
      writeFileSync(configFile, `max_payload: ${options.maxPayloadBytes}\n`);
    }
    const nats = new LocalNats(await findFreePort(), configFile);
    await nats.start();
    return nats;
  }

  async start(): Promise<void> {
    if (this.server) return;
    this.server = await startServer(
      'nats-server',
      NATS_SERVER,
      ['-a', '127.0.0.1', '-p', String(this.port), ...(this.configFile ? ['-c', this.configFile] : [])],
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
  ensureDebianPackage('nats-server', () => (existsSync(NATS_SERVER) ? NATS_SERVER : undefined));
}
