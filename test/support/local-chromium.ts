import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { ensureDebianPackage } from './debian-package.js';

const CHROMIUM = '/usr/bin/chromium';

/**
 * Chromium's new headless mode is the whole browser: it preloads the address bar's drop-down (a WebUI page,
 * chrome://omnibox-popup.top-chrome/, in a renderer of its own) that a headless test never opens. Without it a launch,
 * three loads of the console and a screenshot cost 2.2-2.4 CPU-s instead of 2.6-2.7 (Chromium 156, Debian 12).
 */
const UNUSED_BROWSER_UI = '--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup,PreloadTopChromeWebUI';

/**
 * Headless Chromium from Debian's `chromium` package (installed by .ci/run, or here when missing and root), driven
 * by playwright-core (which downloads no browser of its own). `--no-sandbox`: the tests may run as root, where
 * Chromium's sandbox refuses to start.
 */
export async function launchChromium(): Promise<Browser> {
  ensureInstalled();
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', UNUSED_BROWSER_UI], timeout: 60_000 });
}

function ensureInstalled(): void {
  ensureDebianPackage('chromium', () => (existsSync(CHROMIUM) ? CHROMIUM : undefined));
}
