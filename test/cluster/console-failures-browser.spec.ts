import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../../lib/devtools/local-zookeeper.js';
import { ElasticJobOperator } from '../../lib/index.js';
import { ClusterInstance, waitForRuns } from '../support/cluster.js';
import { launchChromium } from '../support/local-chromium.js';
import { observer, releaseAll } from '../support/resources.js';
import { uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * The console with no database, in a real browser against three real processes: the failures and executions come
 * from the instances' in-memory logs, asked through ZooKeeper; a failed item is run again from the failures view,
 * on its owner only, and succeeds; the tables fit at 1280 and 390 px; another registry is shown read-only.
 */

const IPS = ['127.0.0.5', '127.0.0.6', '127.0.0.7'];
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? 'docs/images' : 'build/screenshots';
let browser: Browser;
const instances: ClusterInstance[] = [];

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  for (const instance of instances.splice(0)) instance.kill('SIGKILL');
  await releaseAll();
  await browser?.close();
});

describe('console failures without a database, on a three-process cluster', () => {
  it('lists the failed item with its stack from the instances, runs it again on its owner, fits narrow screens, switches registries', async () => {
    const namespace = uniqueNamespace('console-failures');
    const ledgerNamespace = uniqueNamespace('console-ledger');
    const port = await findFreePort();
    // Another team's namespace, which the console shows read-only beside its own.
    const ledger = new ClusterInstance({
      zkConnect: zkConnect(),
      namespace: ledgerNamespace,
      jobName: 'ledger-close',
      total: 2,
      cron: '0 0 3 1 1 ?',
      ip: '127.0.0.8',
    });
    instances.push(ledger);
    const cluster = IPS.map(
      (ip, index) =>
        new ClusterInstance({
          zkConnect: zkConnect(),
          namespace,
          jobName: 'invoice-export',
          total: 6,
          cron: '0 0 3 1 1 ?',
          workMs: 50,
          failOnce: [2],
          ip,
          ...(index === 0
            ? {
                consolePort: port,
                consoleRegistries: [{ name: 'ledger', serverLists: zkConnect(), namespace: ledgerNamespace }],
              }
            : {}),
        }),
    );
    instances.push(...cluster);
    await Promise.all([...cluster, ledger].map((instance) => instance.waitForLine(/^READY$/, 60_000)));
    const operator = await ElasticJobOperator.connect({ serverLists: zkConnect(), namespace });
    try {
      await operator.trigger('invoice-export');
      const runs = () => cluster.flatMap((instance) => instance.runs());
      await waitForRuns(cluster, () => runs().length >= 6, 30_000, 'the firing');
      const owner = cluster.find((instance) => instance.runs().some((run) => run.item === 2 && run.failed))!;

      const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
      await page.goto(`http://127.0.0.1:${port}/elastic-job#invoice-export`);
      await expect.poll(() => page.locator('#live').textContent(), { timeout: 20_000 }).toBe('live');
      // ElasticJob's status says OK; the job's header says what it leaves out.
      await expect.poll(() => page.locator('#detail h2 .badge').first().textContent()).toBe('OK');
      // The job's next five fire times (once a year: five years).
      const nextFireTimes = await page
        .locator('#detail dt', { hasText: 'Next fire times' })
        .evaluate((dt) => dt.nextElementSibling?.textContent ?? '');
      expect(nextFireTimes.split(' · ')).toHaveLength(5);
      await expect.poll(() => page.locator('#failing').textContent(), { timeout: 20_000 }).toBe('FAILING: ITEM 2');
      const failure = page.locator('#failures tbody tr[data-job="invoice-export"][data-item="2"]');
      await expect.poll(() => failure.count(), { timeout: 20_000 }).toBe(1);
      await expect
        .poll(() => failure.locator('summary').textContent())
        .toBe('Error: item 2 failed once (JOB_FAIL_ONCE)');
      await failure.locator('summary').click(); // the stack, a click away
      await expect.poll(() => failure.locator('pre').textContent()).toMatch(/\n\s+at /);
      expect(await failure.locator('td.mono').textContent()).toBe(owner.instanceId());
      await expect
        .poll(() => page.locator('#executions-source').textContent(), { timeout: 20_000 })
        .toBe('From the in-memory logs of 3 instance(s).');
      await page.screenshot({ path: `${SCREENSHOTS}/console-failures.png`, fullPage: true });

      // Run again: item 2 only, on its owner, and it succeeds there.
      await failure.getByRole('button', { name: 'Run item 2 of invoice-export again' }).click();
      await page.getByRole('button', { name: 'Confirm' }).click();
      // The banner says what was done, then goes by itself.
      await expect
        .poll(() => page.locator('#toast p').textContent())
        .toMatch(/^asked .* to run item 2 of invoice-export again/);
      await expect.poll(() => page.locator('#toast p').count(), { timeout: 10_000 }).toBe(0);
      await waitForRuns(cluster, () => runs().length >= 7, 30_000, 'the rerun');
      const rerun = runs()
        .slice(0)
        .filter((run) => run.item === 2);
      expect(rerun).toHaveLength(2);
      expect(
        owner
          .runs()
          .filter((run) => run.item === 2)
          .map((run) => run.failed ?? false),
      ).toEqual([true, false]);
      expect(runs()).toHaveLength(7); // nothing else ran
      await expect
        .poll(
          () => page.locator('#executions tbody tr[data-job="invoice-export"][data-item="2"] .badge').allTextContents(),
          { timeout: 20_000 },
        )
        .toEqual(['SUCCESS', 'FAILURE']);
      const zk = await observer(namespace);
      expect((await zk.getChildren('/invoice-export/rerun')) ?? []).toEqual([]);
      // Item 2 ran again and succeeded: no longer failing; a disabled item is said.
      await expect.poll(() => page.locator('#failing').count(), { timeout: 20_000 }).toBe(0);
      await operator.disableItem('invoice-export', 5);
      await expect
        .poll(() => page.locator('#items-disabled').textContent(), { timeout: 20_000 })
        .toBe('1 ITEM(S) DISABLED');

      // Every table fits at a laptop's and a phone's width: no sideways scrolling, no button cut off.
      for (const viewport of [
        { width: 1280, height: 1000 },
        { width: 390, height: 844 },
      ]) {
        await page.setViewportSize(viewport);
        await page.goto('about:blank'); // a load, not a jump to the fragment
        await page.goto(`http://127.0.0.1:${port}/elastic-job#invoice-export`);
        await page.locator('#detail h2', { hasText: 'invoice-export' }).waitFor();
        await expect.poll(() => page.locator('#failures tbody tr[data-item="2"]').count(), { timeout: 20_000 }).toBe(1);
        const overflow = await page.evaluate((width) => {
          const wide = Array.from(document.querySelectorAll<HTMLElement>('.table-wrap'))
            .filter((wrap) => wrap.scrollWidth > wrap.clientWidth + 1)
            .map((wrap) => wrap.querySelector('caption')?.textContent ?? '?');
          const cut = Array.from(document.querySelectorAll<HTMLElement>('button'))
            .filter((button) => button.offsetParent !== null && button.getBoundingClientRect().right > width)
            .map((button) => button.getAttribute('aria-label') ?? button.textContent);
          return { page: document.documentElement.scrollWidth > width, wide, cut };
        }, viewport.width);
        await page.screenshot({ path: `build/screenshots/console-${viewport.width}.png`, fullPage: true });
        expect(overflow, `${viewport.width} px`).toEqual({ page: false, wide: [], cut: [] });
      }

      // The other registry: its jobs and servers, live, read-only (no action buttons); then back to the app's own.
      await page.setViewportSize({ width: 1280, height: 1000 });
      await page.getByLabel('Registry').selectOption({ label: `ledger (${ledgerNamespace})` });
      await expect
        .poll(() => page.locator('#jobs-list tbody th').allTextContents(), { timeout: 20_000 })
        .toEqual(['ledger-close']);
      await expect.poll(() => page.locator('#actions-pill').textContent()).toBe('read-only');
      await expect.poll(() => page.locator('#live').textContent(), { timeout: 20_000 }).toBe('live');
      await page.getByRole('button', { name: 'Open job ledger-close' }).click();
      await page.locator('#detail h2', { hasText: 'ledger-close' }).waitFor();
      expect(await page.locator('#detail button', { hasText: 'Trigger' }).count()).toBe(0);
      expect(await page.locator('#servers button').count()).toBe(0);
      await expect.poll(() => page.locator('#servers tbody th').allTextContents()).toEqual(['127.0.0.8']);
      await page.screenshot({ path: `${SCREENSHOTS}/console-registries.png` });
      await page.getByLabel('Registry').selectOption({ value: '' });
      await expect
        .poll(() => page.locator('#jobs-list tbody th').allTextContents(), { timeout: 20_000 })
        .toEqual(['invoice-export']);
      await expect.poll(() => page.locator('#actions-pill').textContent()).toBe('actions on');
      await page.close();
    } finally {
      await operator.close();
    }
  });
});
