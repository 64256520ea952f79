// npm run docs:api [-- --out DIR] [TypeDoc's options]: the API reference from the TSDoc, into docs/api/ (not
// committed). TypeDoc runs from this folder's own install (see package.json: it needs TypeScript 6's API),
// installed here on first use.
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const marker = resolve(here, 'node_modules/.package-lock.json');
if (!existsSync(marker) || statSync(marker).mtimeMs < statSync(resolve(here, 'package-lock.json')).mtimeMs) {
  process.stderr.write('[docs:api] installing TypeDoc (npm ci in tools/api-docs)...\n');
  // --prefer-offline: the tarballs the lockfile pins are taken from npm's cache when there, without asking the
  // registry again (5.8 -> 4.1 CPU-s with a warm cache); the others are downloaded as before.
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: here, stdio: 'inherit' });
}
const args = process.argv.slice(2);
const outAt = args.indexOf('--out');
const out = outAt >= 0 ? resolve(args[outAt + 1] ?? '') : resolve(here, '../../docs/api');
// Any other argument is TypeDoc's own (test/integration/api-docs.spec.ts passes --skipErrorChecking).
const typedocArgs = outAt >= 0 ? [...args.slice(0, outAt), ...args.slice(outAt + 2)] : args;
execFileSync(
  process.execPath,
  [
    resolve(here, 'node_modules/typedoc/bin/typedoc'),
    '--options',
    resolve(here, 'typedoc.config.mjs'),
    '--out',
    out,
    ...typedocArgs,
  ],
  { cwd: here, stdio: 'inherit' },
);
process.stderr.write(`[docs:api] written to ${out}\n`);
