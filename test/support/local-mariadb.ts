import { execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createConnection } from 'mysql2/promise';
import { findFreePort } from '../../lib/devtools/local-zookeeper.js';
import { startServer, stopServer } from './server-process.js';
import { ensureDebianPackage } from './debian-package.js';

const MARIADBD = '/usr/sbin/mariadbd';
const INSTALL_DB = '/usr/bin/mariadb-install-db';

/**
 * The server's settings, for mariadb-install-db and mariadbd alike: no defaults files (never the package's own
 * /etc/mysql), small InnoDB files, no fsync (a throwaway), utf8mb4 as Debian's own configuration sets it, and a
 * time zone that is not the tests' (UTC), so that a TIMESTAMP written or read in the server's zone shows.
 */
const SETTINGS = [
  '--innodb-log-file-size=8M',
  '--innodb-buffer-pool-size=16M',
  '--innodb-flush-method=nosync',
  '--innodb-doublewrite=0',
  '--innodb-flush-log-at-trx-commit=0',
  '--innodb-buffer-pool-dump-at-shutdown=0',
  '--innodb-buffer-pool-load-at-startup=0',
  '--character-set-server=utf8mb4',
  '--collation-server=utf8mb4_general_ci',
  '--skip-name-resolve',
  '--default-time-zone=+05:00',
];

/**
 * A throwaway MariaDB server (MySQL's protocol and SQL) for the MySQL tracing tests, from Debian's `mariadb-server`
 * package (installed by .ci/run, or here when missing and root): a data directory of its own made by
 * mariadb-install-db in a temp dir, a free loopback port, root without a password, a database `elasticjob`; never
 * the package's service. As root (CI containers) mariadbd is told `--user=root`, as it asks. `stop()` and `start()`
 * again keep the data: a database going away and coming back mid-run.
 */
export class LocalMariaDb {
  private server: ChildProcess | undefined;

  private constructor(
    private readonly dir: string,
    readonly port: number,
  ) {}

  /** `mysql://root@127.0.0.1:{port}/elasticjob` */
  get connectionString(): string {
    return `mysql://root@127.0.0.1:${this.port}/elasticjob`;
  }

  static async create(): Promise<LocalMariaDb> {
    ensureDebianPackage('mariadb-server', () => (existsSync(MARIADBD) && existsSync(INSTALL_DB) ? true : undefined));
    const dir = mkdtempSync(join(tmpdir(), 'nestjs-elastic-job-mariadb-'));
    const server = new LocalMariaDb(dir, await findFreePort());
    try {
      await promisify(execFile)(INSTALL_DB, [
        '--no-defaults',
        `--datadir=${join(dir, 'data')}`,
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
        ...asUser(),
        ...SETTINGS,
      ]);
      await server.start();
      const admin = await createConnection({ uri: `mysql://root@127.0.0.1:${server.port}/` });
      await admin.query('CREATE DATABASE elasticjob');
      await admin.end();
      return server;
    } catch (error) {
      await server.destroy();
      throw error;
    }
  }

  async start(): Promise<void> {
    if (this.server) return;
    this.server = await startServer(
      'MariaDB',
      MARIADBD,
      [
        '--no-defaults',
        `--datadir=${join(this.dir, 'data')}`,
        `--socket=${join(this.dir, 'mariadbd.sock')}`,
        `--pid-file=${join(this.dir, 'mariadbd.pid')}`,
        `--tmpdir=${this.dir}`,
        `--port=${this.port}`,
        '--bind-address=127.0.0.1',
        ...asUser(),
        ...SETTINGS,
      ],
      'ready for connections',
      60_000,
    );
  }

  /** A normal shutdown (SIGTERM): connections are cut, as when a database server goes away. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await stopServer(server, 'SIGTERM');
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** mariadbd refuses to run as root unless told so. */
function asUser(): string[] {
  return typeof process.getuid === 'function' && process.getuid() === 0 ? ['--user=root'] : [];
}
