import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '../../lib/devtools/local-zookeeper.js';
import { startServer, stopServer } from './server-process.js';
import { ensureDebianPackage } from './debian-package.js';

const REDIS_SERVER = '/usr/bin/redis-server';

/**
 * A throwaway Redis for the bench's BullMQ comparison, from Debian's `redis-server` package (installed by .ci/run, or
 * here when missing and root): the binary spawned on a free loopback port with a temp dir of its own and no
 * persistence (no RDB snapshots, no AOF), never the package's systemd service. `stop()` kills it and removes the dir.
 */
export class LocalRedis {
  private server: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async create(): Promise<LocalRedis> {
    ensureInstalled();
    const redis = new LocalRedis(await findFreePort(), mkdtempSync(join(tmpdir(), 'local-redis-')));
    try {
      redis.server = await startServer(
        'redis-server',
        REDIS_SERVER,
        [
          '--bind',
          '127.0.0.1',
          '--port',
          String(redis.port),
          '--dir',
          redis.dir,
          '--save',
          '',
          '--appendonly',
          'no',
          '--daemonize',
          'no',
          // The log on stdout, where startServer() waits for the ready line.
          '--logfile',
          '',
        ],
        'Ready to accept connections',
        20_000,
        {},
        'stdout',
      );
    } catch (error) {
      rmSync(redis.dir, { recursive: true, force: true });
      throw error;
    }
    return redis;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await stopServer(server, 'SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function ensureInstalled(): void {
  ensureDebianPackage('redis-server', () => (existsSync(REDIS_SERVER) ? REDIS_SERVER : undefined));
}
