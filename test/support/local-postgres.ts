import { execFileSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '../../lib/devtools/local-zookeeper.js';
import { startServer, stopServer } from './server-process.js';
import { ensureDebianPackage } from './debian-package.js';

/**
 * A throwaway PostgreSQL server for the tracing tests, from Debian's `postgresql` package (installed by .ci/run,
 * or here when missing and root): its own data directory and socket directory in a temp dir, a free loopback port,
 * trust authentication, fsync off. As root (CI containers) the server runs as the package's `postgres` user (spawned
 * with its uid, so that signals reach it), since PostgreSQL refuses to run as root. `stop()` and `start()` again keep the data: a database going away and coming
 * back mid-run.
 */
export class LocalPostgres {
  private server: ChildProcess | undefined;

  private constructor(
    private readonly bin: string,
    private readonly dir: string,
    readonly port: number,
  ) {}

  /** `postgres://postgres@127.0.0.1:{port}/postgres` */
  get connectionString(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async create(): Promise<LocalPostgres> {
    const bin = postgresBinDir();
    const dir = mkdtempSync(join(tmpdir(), 'nestjs-elastic-job-pg-'));
    const server = new LocalPostgres(bin, dir, await findFreePort());
    if (runsAsRoot()) chownSync(dir, postgresUid(), postgresGid());
    server.run('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    await server.start();
    return server;
  }

  async start(): Promise<void> {
    if (this.server) return;
    const args = [
      '-D',
      join(this.dir, 'data'),
      '-p',
      String(this.port),
      '-k',
      this.dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=off',
      '-c',
      'full_page_writes=off',
    ];
    this.server = await startServer(
      'PostgreSQL',
      join(this.bin, 'postgres'),
      args,
      'database system is ready to accept connections',
      30_000,
      serverUser(),
    );
  }

  /** Fast shutdown (SIGINT): connections are cut, as when a database server goes away. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await stopServer(server, 'SIGINT');
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private run(tool: string, args: string[]): void {
    execFileSync(join(this.bin, tool), args, { stdio: ['ignore', 'ignore', 'pipe'], ...serverUser() });
  }
}

/** As root, the package's `postgres` user (PostgreSQL refuses root); otherwise whoever runs the tests. */
function serverUser(): { uid?: number; gid?: number; cwd?: string } {
  return runsAsRoot() ? { uid: postgresUid(), gid: postgresGid(), cwd: tmpdir() } : {};
}

function runsAsRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

function postgresUid(): number {
  return Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
}

function postgresGid(): number {
  return Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
}

/** The newest installed server's bin directory; installs Debian's `postgresql` when none is there and we are root. */
function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const find = (): string | undefined =>
    existsSync(root)
      ? readdirSync(root)
          .filter((version) => existsSync(join(root, version, 'bin', 'postgres')))
          .sort((a, b) => Number(b) - Number(a))
          .map((version) => join(root, version, 'bin'))[0]
      : undefined;
  return ensureDebianPackage(
    'postgresql',
    find,
    "PostgreSQL is not installed: sudo apt-get install postgresql (or set PG_CONNECT to a server's connection string)",
  );
}
