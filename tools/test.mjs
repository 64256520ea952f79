// `npm test`: vitest, with the lint (tools/lint.mjs --no-typecheck) running beside it at the lowest CPU priority.
// The suite keeps both cores about nine tenths busy (a run on the 2-core machine, sampled each second: 1.85 cores on
// average, 1.6 in its last 50 s), so the lint's 22 CPU-s fit in what vitest leaves idle, where before it held the
// suite back by its 11 s of wall time. Its output is printed after vitest's; the exit code is 1 when either failed.
// Vitest runs the `real` project, which holds every file (vitest.config.mts).
//   node tools/test.mjs [vitest arguments...]
import { spawn } from 'node:child_process';

const children = new Set();
const run = (args, options) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, args, options);
    children.add(child);
    let output = '';
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    child.once('error', (error) => resolve({ code: 1, output: `${output}${error.message}\n` }));
    child.once('close', (code, signal) => {
      children.delete(child);
      resolve({ code: code ?? (signal ? 1 : 0), output });
    });
  });

// Stopped (Ctrl-C, or a CI timeout's SIGTERM to this process alone): each child is told, and waited for, so that
// vitest stops its ZooKeeper and the processes it started before this exits.
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
  });

// Vitest's own bin, run by this Node (as npm's shim would, on every platform).
const vitest = 'node_modules/vitest/vitest.mjs';
const [lint, tests] = await Promise.all([
  run(['tools/lint.mjs', '--no-typecheck', '--lowest-priority'], { stdio: ['ignore', 'pipe', 'pipe'] }),
  run([vitest, 'run', '--project', 'real', ...process.argv.slice(2)], { stdio: 'inherit' }),
]);
process.stdout.write(`\n> lint (beside the tests)\n${lint.output}`);
if (lint.code !== 0)
  process.stdout.write(
    'The lint failed: run `npm run lint` to see it alone, `npx prettier --write .` for formatting.\n',
  );
process.exit(lint.code === 0 && tests.code === 0 ? 0 : 1);
