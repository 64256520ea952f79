/**
 * The sample cluster: 3 instances of sample/main.ts on one ZooKeeper (a throwaway local one when ZK_CONNECT is
 * unset). After 12 s one instance is stopped (SIGTERM) and the items move to the two others; a summary of who
 * ran which item, what the operator CLI (`npx nestjs-elastic-job`) showed while three ran, and the ZooKeeper tree,
 * are printed. bravo serves the web console (its URL printed first; CONSOLE_PORT chooses the port). `--keep` (and
 * `npm run sample:console`) keeps the cluster running until Ctrl-C.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { startPrefixed } from './prefixed-process.js';
import { ZookeeperRegistryCenter } from '../lib/registry/zookeeper-registry-center.js';
import { dumpTree } from '../tools/zookeeper/dump-tree.js';
import { findFreePort, LocalZookeeper } from '../lib/devtools/local-zookeeper.js';

const PHASE_MS = 12_000;
const names = ['alpha', 'bravo', 'charlie'];
type Sighting = { phase: number; job: string; item: number; instance: string };
const sightings: Sighting[] = [];
let phase = 1;

function startInstance(
  name: string,
  index: number,
  zkConnect: string,
  namespace: string,
  consolePort: number | undefined,
): ChildProcess {
  // The console port goes to bravo only: the others would fail to listen on it.
  const { CONSOLE_PORT: _consolePort, ...inherited } = process.env;
  return startPrefixed({
    name,
    index,
    width: 8,
    script: 'build/sample/main.js',
    env: {
      ...inherited,
      ZK_CONNECT: zkConnect,
      ZK_NAMESPACE: namespace,
      INSTANCE_NAME: name,
      NO_COLOR: '1',
      ...(consolePort === undefined ? {} : { CONSOLE_PORT: String(consolePort) }),
    },
    onLine: (line) => {
      const match = /\[(region-report|cache-cleanup)\] item (\d+)/.exec(line);
      if (match) sightings.push({ phase, job: match[1]!, item: Number(match[2]), instance: name });
    },
  });
}

/** What the package's CLI prints for these commands, each under the command line an operator would type. */
async function operatorView(zkConnect: string, namespace: string, commands: string[][]): Promise<string> {
  const blocks: string[] = [];
  for (const command of commands) {
    const output = await new Promise<string>((resolve) => {
      execFile(
        process.execPath,
        ['build/lib/cli/main.js', ...command, '--zk', zkConnect, '--namespace', namespace],
        (error, stdout, stderr) => resolve(error ? `${stdout}${stderr}(exit ${error.code})\n` : stdout),
      );
    });
    blocks.push(`$ npx nestjs-elastic-job ${command.join(' ')} --namespace ${namespace}\n${output}`);
  }
  return blocks.join('\n');
}

function summary(): void {
  for (const job of ['region-report', 'cache-cleanup']) {
    process.stdout.write(`\n${job}: which instance ran each item\n`);
    for (const p of [1, 2]) {
      const owners = new Map<number, Set<string>>();
      for (const s of sightings.filter((sighting) => sighting.job === job && sighting.phase === p)) {
        owners.set(s.item, (owners.get(s.item) ?? new Set()).add(s.instance));
      }
      const row = [...owners.entries()]
        .sort(([a], [b]) => a - b)
        .map(([item, who]) => `${item}→${[...who].join('+')}`)
        .join('  ');
      process.stdout.write(`  ${p === 1 ? 'with alpha, bravo, charlie' : 'after alpha stopped      '}: ${row}\n`);
    }
  }
}

async function main(): Promise<void> {
  const keep = process.argv.includes('--keep');
  let zk: LocalZookeeper | undefined;
  let zkConnect = process.env.ZK_CONNECT;
  if (!zkConnect) {
    process.stdout.write('ZK_CONNECT is not set: starting a throwaway ZooKeeper on a free loopback port...\n');
    zk = await LocalZookeeper.start({ tickTimeMs: 500 });
    zkConnect = zk.connectString;
  }
  const namespace = `elastic-job-sample-${Date.now()}`;
  process.stdout.write(`ZooKeeper ${zkConnect}, namespace /${namespace}\n\n`);
  // bravo serves the console: alpha is the one stopped half-way.
  const consolePort = process.env.CONSOLE_PORT ? Number(process.env.CONSOLE_PORT) : await findFreePort();
  const consoleUrl = `http://127.0.0.1:${consolePort}/elastic-job`;
  process.stdout.write(`Web console (served by bravo): ${consoleUrl}\n\n`);
  const children = names.map((name, index) =>
    startInstance(name, index, zkConnect!, namespace, name === 'bravo' ? consolePort : undefined),
  );
  const stopAll = async (): Promise<void> => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
    await zk?.stop();
  };
  process.once('SIGINT', () => void stopAll().then(() => process.exit(0)));

  await new Promise((r) => setTimeout(r, PHASE_MS));
  const withThree = await operatorView(zkConnect, namespace, [['jobs'], ['servers'], ['sharding', 'region-report']]);
  process.stdout.write(`\n=== stopping alpha (SIGTERM): its items move to bravo and charlie ===\n\n`);
  const alpha = children[0]!;
  await new Promise<void>((resolve) => {
    alpha.once('exit', () => resolve());
    alpha.kill('SIGTERM');
  });
  phase = 2;
  await new Promise((r) => setTimeout(r, PHASE_MS));

  const registry = new ZookeeperRegistryCenter({ serverLists: zkConnect, namespace });
  await registry.start();
  const tree = await dumpTree(registry, '/');
  await registry.close();
  summary();
  process.stdout.write(`\nThe operator's view while alpha, bravo and charlie ran:\n\n${withThree}`);
  process.stdout.write(`\nZooKeeper tree of /${namespace}:\n${tree.join('\n')}\n`);
  if (keep) {
    process.stdout.write(`\n--keep: cluster keeps running; the console is at ${consoleUrl}; Ctrl-C to stop.\n`);
    return;
  }
  process.stdout.write(`\nThe web console was at ${consoleUrl} (npm run sample:console keeps it running).\n`);
  await stopAll();
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
