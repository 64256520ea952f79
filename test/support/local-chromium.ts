import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

/**
 * Headless Chromium from Debian's `chromium` package (installed by .ci/run, or here when missing and root), driven
 * by playwright-core (which downloads no browser of its own). `--no-sandbox`: the tests may run as root, where
 * Chromium's sandbox refuses to start.
 */
export async function launchChromium(): Promise<Browser> {
  ensureInstalled();
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], timeout: 60_000 });
}

function ensureInstalled(): void {
  if (existsSync(CHROMIUM)) return;
  if (typeof process.getuid === 'function' && process.getuid() === 0) {
    process.stderr.write('[local-chromium] installing Debian package: chromium\n');
    execFileSync('sh', ['-c', 'apt-get update && apt-get install -y --no-install-recommends chromium'], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (existsSync(CHROMIUM)) return;
  }
  throw new Error('chromium is not installed: sudo apt-get install chromium');
}
