// `npm test`: vitest, with the lint (tools/lint.mjs --no-typecheck) running beside it at the lowest CPU priority.
// The suite keeps both cores about nine tenths busy (sampled each second over a run on the 2-core machine: 1.85 cores
// on average, 1.6 in its last 50 s), so the lint's 22 CPU-s fit in what vitest leaves idle, where before it held the
// suite back by its 11 s of wall time. Its output is printed after vitest's; the exit code is 1 when either failed.
//   node tools/test.mjs [vitest arguments...]
// Vitest runs the `real` project, which holds every file (vitest.config.mts).
import { spawn } from 'node:child_process';

const run = (command, args, options) =>
  new Promise((resolve) => {
    const child = spawn(command, args, options);
    let output = '';
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    child.once('error', (error) => resolve({ code: 1, output: `${output}${error.message}\n` }));
    child.once('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });

const [lint, tests] = await Promise.all([
  run(process.execPath, ['tools/lint.mjs', '--no-typecheck', '--lowest-priority'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  }),
  run('node_modules/.bin/vitest', ['run', '--project', 'real', ...process.argv.slice(2)], { stdio: 'inherit' }),
]);
process.stdout.write(`\n> lint (beside the tests)\n${lint.output}`);
if (lint.code !== 0)
  process.stdout.write(
    'The lint failed: run `npm run lint` to see it alone, `npx prettier --write .` for formatting.\n',
  );
process.exit(lint.code === 0 && tests.code === 0 ? 0 : 1);
