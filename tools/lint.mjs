// `npm run lint`: Prettier, oxlint, tsc and the layer rule, side by side rather than one after the other (Prettier
// alone is one core for about 12 s; halved over two processes, the whole lint takes the time of its longest part).
// Each check's output is printed whole when it ends; exits 1 when any failed.
//   node tools/lint.mjs [--no-typecheck] [--lowest-priority]
// `--no-typecheck` (npm test): vitest's global setup compiles the same tsconfig.json and fails the run on a type
// error (test/support/global-setup.ts), so `npm test` does not type-check twice.
// `--lowest-priority` (npm test, tools/test.mjs): the checks take only the CPU the tests beside them leave idle.
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';

// Niceness 19, set before the checks start, so that they inherit it.
if (process.argv.includes('--lowest-priority')) setPriority(19);

const bin = (name) => `node_modules/.bin/${name}`;
// Prettier's `.` in two halves of about equal work; the second is everything the first leaves out.
const PRETTIER_FIRST = ['lib', 'bench', 'sample'];
const checks = [
  [bin('prettier'), ['--check', ...PRETTIER_FIRST]],
  [bin('prettier'), ['--check', '.', ...PRETTIER_FIRST.map((dir) => `!${dir}/**`)]],
  [bin('oxlint'), ['--deny-warnings']],
  ...(process.argv.includes('--no-typecheck') ? [] : [[bin('tsc'), ['-p', 'tsconfig.json', '--noEmit']]]),
  [process.execPath, ['tools/check-layers.mjs']],
];

const results = await Promise.all(
  checks.map(
    ([command, args]) =>
      new Promise((resolve) => {
        const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        child.stdout.on('data', (chunk) => (output += chunk));
        child.stderr.on('data', (chunk) => (output += chunk));
        child.once('error', (error) => resolve({ command, args, code: 1, output: `${output}${error.message}\n` }));
        child.once('close', (code) => resolve({ command, args, code, output }));
      }),
  ),
);
for (const { command, args, code, output } of results) {
  process.stdout.write(`> ${command.replace('node_modules/.bin/', '')} ${args.join(' ')}\n${output}`);
  if (code !== 0) process.stdout.write(`(failed: exit ${code})\n`);
}
process.exit(results.every(({ code }) => code === 0) ? 0 : 1);
