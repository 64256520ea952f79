/**
 * A throwaway standalone ZooKeeper for tests, the sample cluster, the benchmarks and users' development
 * (`npx nestjs-elastic-job zookeeper`).
 *
 * Runs Debian's `libzookeeper-java` jar directly with `ZooKeeperServerMain` (no init scripts, no /etc config),
 * on a free loopback port with its own temp data dir, and removes everything on stop().
 * Missing Debian packages are installed when running as root; otherwise the error says what to install.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ZOOKEEPER_JAR = '/usr/share/java/zookeeper.jar';
export const SLF4J_SIMPLE_JAR = '/usr/share/java/slf4j-simple.jar';
export const CURATOR_RECIPES_JAR = '/usr/share/java/curator-recipes.jar';

/**
 * Debian packages the throwaway server and the Java interop tests need: Curator (leader latch), Quartz and SnakeYAML
 * (how a Java ElasticJob instance reads the config node's cron and YAML). Same list as .ci/run.
 */
export const DEBIAN_PACKAGES = [
  'libzookeeper-java',
  'libslf4j-java',
  'libcurator-recipes-java',
  'libquartz2-java',
  'libyaml-snake-java',
  'openjdk-17-jdk-headless',
];

export interface LocalZookeeperOptions {
  /** ZooKeeper tick; session timeouts are clamped to [2, 20] ticks. Default 200 ms: sessions of 400..4000 ms. */
  tickTimeMs?: number;
  /** Port to listen on; default: a free loopback port. */
  port?: number;
  /** How often empty container nodes are reaped (JVM flag). Default 1000 ms. */
  containerCheckIntervalMs?: number;
  /** Largest session timeout the server grants. Default 60000 ms (ZooKeeper's own default is 20 ticks). */
  maxSessionTimeoutMs?: number;
  /** Quick JVM start (C1 compiler only, small heap): right for tests; benchmarks want the full JIT. Default true. */
  fastStart?: boolean;
  /** The Debian packages to check (and install as root). Default DEBIAN_PACKAGES, the tests' whole list. */
  debianPackages?: string[];
}

/**
 * What a ZooKeeper server alone needs: its jars, a logging binding, and a Java runtime unless one is on the PATH
 * (Debian's default one otherwise).
 */
export function serverDebianPackages(): string[] {
  return ['libzookeeper-java', 'libslf4j-java', ...(commandExists('java') ? [] : ['default-jre-headless'])];
}

function commandExists(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Installs the Debian packages when missing and we are root; throws with the exact command otherwise. */
export function ensureZookeeperInstalled(packages: string[] = DEBIAN_PACKAGES): void {
  const missing = packages.filter((pkg) => {
    try {
      const status = execFileSync('dpkg-query', ['-W', '-f=${Status}', pkg], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      return !status.includes('install ok installed');
    } catch {
      return true;
    }
  });
  if (missing.length === 0 && existsSync(ZOOKEEPER_JAR) && commandExists('java')) return;
  const command = `apt-get update && apt-get install -y --no-install-recommends ${missing.join(' ')}`;
  if (typeof process.getuid === 'function' && process.getuid() === 0 && commandExists('apt-get')) {
    process.stderr.write(`[local-zookeeper] installing Debian packages: ${missing.join(' ')}\n`);
    execFileSync('sh', ['-c', command], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    return;
  }
  throw new Error(
    `ZooKeeper is not installed. Install it with: sudo sh -c '${command}' (or set ZK_CONNECT to an existing ensemble).`,
  );
}

export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Sends a four-letter word and returns the answer ('' when the server does not answer). */
export function fourLetterWord(host: string, port: number, word: string, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve) => {
    let answer = '';
    const socket = createConnection({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(answer);
    }, timeoutMs);
    socket.on('connect', () => socket.write(word));
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(answer);
    });
  });
}

/**
 * SIGTERM (a clean ZooKeeper shutdown), SIGKILL after 10 s; resolves once it has exited. A process killed by a
 * signal already (OOM killer, kill -9) has a signalCode and no exitCode: its exit event is past, nothing to wait for.
 */
async function stopJvm(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

export class LocalZookeeper {
  private process: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly options: Required<LocalZookeeperOptions>,
  ) {}

  get connectString(): string {
    return `127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  static async start(options: LocalZookeeperOptions = {}): Promise<LocalZookeeper> {
    ensureZookeeperInstalled(options.debianPackages ?? DEBIAN_PACKAGES);
    const resolved: Required<LocalZookeeperOptions> = {
      tickTimeMs: options.tickTimeMs ?? 200,
      port: options.port ?? (await findFreePort()),
      containerCheckIntervalMs: options.containerCheckIntervalMs ?? 1000,
      maxSessionTimeoutMs: options.maxSessionTimeoutMs ?? 60_000,
      fastStart: options.fastStart ?? true,
      debianPackages: options.debianPackages ?? DEBIAN_PACKAGES,
    };
    const dir = mkdtempSync(join(tmpdir(), 'nestjs-elastic-job-zk-'));
    mkdirSync(join(dir, 'data'));
    const zk = new LocalZookeeper(resolved.port, dir, resolved);
    await zk.launch();
    return zk;
  }

  private async launch(): Promise<void> {
    const cfg = [
      `tickTime=${this.options.tickTimeMs}`,
      `maxSessionTimeout=${this.options.maxSessionTimeoutMs}`,
      `dataDir=${join(this.dir, 'data')}`,
      `clientPort=${this.port}`,
      'clientPortAddress=127.0.0.1',
      'admin.enableServer=false',
      '4lw.commands.whitelist=ruok,srvr,stat,mntr,cons,dump,wchs,conf',
      'maxClientCnxns=0',
      '',
    ].join('\n');
    writeFileSync(join(this.dir, 'zoo.cfg'), cfg);
    const classPath = existsSync(SLF4J_SIMPLE_JAR) ? `${ZOOKEEPER_JAR}:${SLF4J_SIMPLE_JAR}` : ZOOKEEPER_JAR;
    const log = openSync(join(this.dir, 'server.log'), 'a');
    this.process = spawn(
      'java',
      [
        ...(this.options.fastStart ? ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1'] : ['-Xmx1g']),
        `-Dznode.container.checkIntervalMs=${this.options.containerCheckIntervalMs}`,
        '-cp',
        classPath,
        'org.apache.zookeeper.server.ZooKeeperServerMain',
        join(this.dir, 'zoo.cfg'),
      ],
      { stdio: ['ignore', log, log], detached: false },
    );
    const exited = new Promise<never>((_, reject) =>
      this.process?.once('exit', (code) =>
        reject(new Error(`ZooKeeper exited with code ${code}; see ${join(this.dir, 'server.log')}`)),
      ),
    );
    exited.catch(() => undefined);
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const answer = await Promise.race([fourLetterWord('127.0.0.1', this.port, 'ruok', 1000), exited]);
      if (answer === 'imok') return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`ZooKeeper did not answer on port ${this.port} within 60 s; see ${join(this.dir, 'server.log')}`);
  }

  /** Stops the server (SIGTERM, clean shutdown); the data dir is kept, so restart() brings the same tree back. */
  async stopServer(): Promise<void> {
    await stopJvm(this.process);
  }

  async restart(): Promise<void> {
    await this.stopServer();
    await this.launch();
  }

  /** Stops the server and deletes its data dir. */
  async stop(): Promise<void> {
    await this.stopServer();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A 3-server (or n-server) ensemble on loopback, each member its own JVM (QuorumPeerMain) with its own dir.
 * For fault tests: stop and start members, find the leader with the `srvr` four-letter word.
 */
export class ZookeeperEnsemble {
  private readonly processes = new Map<number, ChildProcess>();

  private constructor(
    readonly dir: string,
    readonly clientPorts: number[],
    readonly tickTimeMs: number,
  ) {}

  get connectString(): string {
    return this.clientPorts.map((port) => `127.0.0.1:${port}`).join(',');
  }

  static async start(size = 3, tickTimeMs = 200): Promise<ZookeeperEnsemble> {
    ensureZookeeperInstalled();
    const dir = mkdtempSync(join(tmpdir(), 'nestjs-elastic-job-ensemble-'));
    const ports: number[] = [];
    for (let i = 0; i < size * 3; i++) ports.push(await findFreePort());
    const clientPorts = ports.slice(0, size);
    const servers = Array.from(
      { length: size },
      (_, i) => `server.${i + 1}=127.0.0.1:${ports[size + i]}:${ports[2 * size + i]}`,
    );
    for (let i = 0; i < size; i++) {
      const memberDir = join(dir, `member-${i + 1}`);
      mkdirSync(join(memberDir, 'data'), { recursive: true });
      writeFileSync(join(memberDir, 'data', 'myid'), `${i + 1}\n`);
      writeFileSync(
        join(memberDir, 'zoo.cfg'),
        [
          `tickTime=${tickTimeMs}`,
          'initLimit=20',
          'syncLimit=10',
          'maxSessionTimeout=60000',
          `dataDir=${join(memberDir, 'data')}`,
          `clientPort=${clientPorts[i]}`,
          'clientPortAddress=127.0.0.1',
          'admin.enableServer=false',
          '4lw.commands.whitelist=ruok,srvr,stat,mntr',
          'maxClientCnxns=0',
          ...servers,
          '',
        ].join('\n'),
      );
    }
    const ensemble = new ZookeeperEnsemble(dir, clientPorts, tickTimeMs);
    for (let member = 1; member <= size; member++) ensemble.launch(member);
    await ensemble.waitForQuorum();
    return ensemble;
  }

  private launch(member: number): void {
    const memberDir = join(this.dir, `member-${member}`);
    const log = openSync(join(memberDir, 'server.log'), 'a');
    const classPath = existsSync(SLF4J_SIMPLE_JAR) ? `${ZOOKEEPER_JAR}:${SLF4J_SIMPLE_JAR}` : ZOOKEEPER_JAR;
    const child = spawn(
      'java',
      [
        '-Xmx128m',
        '-XX:+UseSerialGC',
        '-XX:TieredStopAtLevel=1',
        '-cp',
        classPath,
        'org.apache.zookeeper.server.quorum.QuorumPeerMain',
        join(memberDir, 'zoo.cfg'),
      ],
      { stdio: ['ignore', log, log] },
    );
    this.processes.set(member, child);
  }

  /** Resolves once a majority of the members serve clients (`srvr` answers with a Mode). */
  async waitForQuorum(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const modes = await this.modes();
      const serving = [...modes.values()].filter((mode) => mode === 'leader' || mode === 'follower').length;
      if (modes.size > 0 && [...modes.values()].includes('leader') && serving > this.clientPorts.length / 2) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`the ensemble formed no quorum within ${timeoutMs} ms; logs in ${this.dir}`);
  }

  /** Resolves once `member` serves clients again (after startMember). */
  async waitForMember(member: number, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const mode = (await this.modes()).get(member);
      if (mode === 'leader' || mode === 'follower') return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`member ${member} did not rejoin within ${timeoutMs} ms; logs in ${this.dir}`);
  }

  /** member number → 'leader' | 'follower' | 'standalone' | '' (down or not serving). */
  async modes(): Promise<Map<number, string>> {
    const modes = new Map<number, string>();
    await Promise.all(
      this.clientPorts.map(async (port, index) => {
        const answer = await fourLetterWord('127.0.0.1', port, 'srvr', 1000);
        modes.set(index + 1, /Mode: (\w+)/.exec(answer)?.[1] ?? '');
      }),
    );
    return modes;
  }

  async leader(): Promise<number | undefined> {
    for (const [member, mode] of await this.modes()) if (mode === 'leader') return member;
    return undefined;
  }

  async stopMember(member: number): Promise<void> {
    await stopJvm(this.processes.get(member));
  }

  startMember(member: number): void {
    this.launch(member);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.processes.keys()].map((member) => this.stopMember(member)));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
