// Start to ready by CPU, builds alternated run by run (issue 43): each build is a directory with `build/` made by
// `npm run build:all` (a checkout of the other commit beside this one, node_modules linked). One throwaway ZooKeeper,
// a fresh namespace a run, JOBS jobs of 2 items on a cron that never fires during the run. Prints each run and the
// medians: wall and CPU to ready, main-thread CPU, both from registerAll() on, heap allocated, ZooKeeper's CPU.
// RESTART=1: each measured run is a restart (an unmeasured run of the same build made the namespace's trees first,
// and its session expired).
//   node bench/micro/ready-cpu/runs.mjs RUNS label=dir [label=dir ...]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

const runs = Number(process.argv[2]);
const builds = process.argv.slice(3).map((arg) => arg.split('='));
const probe = fileURLToPath(new URL('probe.mjs', import.meta.url));
const { LocalZookeeper } = await import(`${builds[0][1]}/build/lib/devtools/local-zookeeper.js`);
const zk = await LocalZookeeper.start({ tickTimeMs: 200, fastStart: false });
const ticksMs = (pid) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const half = sorted.length / 2;
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[half - 1] + sorted[half]) / 2;
};
const results = Object.fromEntries(builds.map(([label]) => [label, []]));
let namespace = 0;
try {
  for (let round = 0; round < runs; round++) {
    for (const [label, dir] of round % 2 ? [...builds].reverse() : builds) {
      const namespaceOfRun = `ready-${Date.now()}-${namespace++}`;
      const start = () =>
        new Promise((resolve, reject) => {
          const child = spawn(
            process.execPath,
            ['--expose-gc', '--import', probe, 'build/bench/fixtures/bench-app.js'],
            {
              cwd: dir,
              env: {
                ...process.env,
                ZK_CONNECT: zk.connectString,
                ZK_NAMESPACE: namespaceOfRun,
                JOBS: process.env.JOBS ?? '1000',
                JOB_TOTAL: '2',
                JOB_CRON: '0 0 0 1 1 ?',
              },
              stdio: ['ignore', 'pipe', 'inherit'],
            },
          );
          let text = '';
          child.stdout.on('data', (data) => (text += data));
          child.on('exit', () => resolve(text));
          child.on('error', reject);
        });
      if (process.env.RESTART === '1') {
        await start();
        await new Promise((resolve) => setTimeout(resolve, 12_000)); // its session expired: its ephemerals gone
      }
      const zkBefore = ticksMs(zk.pid);
      const output = await start();
      await new Promise((resolve) => setTimeout(resolve, 1500)); // ZooKeeper's work for the closed session too
      const line = (event) =>
        JSON.parse(
          output
            .split('\n')
            .find((l) => l.includes(`"event":"${event}"`))
            .slice(4),
        );
      const [registered, measured] = [line('registered'), line('probe')];
      const row = {
        wall: registered.sinceStartMs,
        cpu: measured.cpuMs,
        main: measured.mainMs,
        regCpu: measured.regCpuMs,
        regMain: measured.regMainMs,
        alloc: measured.allocMB,
        zk: ticksMs(zk.pid) - zkBefore,
      };
      results[label].push(row);
      console.log(label, JSON.stringify(row), `load ${loadavg()[0].toFixed(1)}`);
    }
  }
} finally {
  await zk.stop();
}
for (const [label, rows] of Object.entries(results))
  console.log(
    label,
    'medians',
    Object.keys(rows[0])
      .map((key) => `${key} ${median(rows.map((row) => row[key]))} [${rows.map((row) => row[key]).join(' ')}]`)
      .join(' | '),
  );
process.exit(0);
