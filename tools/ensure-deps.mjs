// Runs `npm ci` when node_modules is missing or older than the lockfile, so that the README's two quick-start
// commands work on a fresh clone. Plain Node, no dependencies.
import { execSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';

const marker = 'node_modules/.package-lock.json';
const stale = !existsSync(marker) || statSync(marker).mtimeMs < statSync('package-lock.json').mtimeMs;
if (stale) {
  process.stderr.write('[ensure-deps] installing npm packages from the lockfile (npm ci)...\n');
  execSync('npm ci --no-audit --no-fund', { stdio: 'inherit' });
}
