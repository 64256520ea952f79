import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { ensureDebianPackage } from './debian-package.js';

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
  ensureDebianPackage('chromium', () => (existsSync(CHROMIUM) ? CHROMIUM : undefined));
}
