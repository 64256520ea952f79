import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../../lib/devtools/local-zookeeper.js';
import { ElasticJobOperator } from '../../lib/index.js';
import { ClusterInstance, waitForRuns } from '../support/cluster.js';
import { launchChromium } from '../support/local-chromium.js';
import { LocalPostgres } from '../support/local-postgres.js';
import { eventually, uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * The web console in a real browser (headless Chromium) against three real processes with tracing into a real
 * PostgreSQL: the page shows the owners ZooKeeper has, a click on "disable item 2" stops item 2 on the cluster and the
 * page shows it, and triggered firings appear in the executions list. The screenshots of docs/guide/console.md are
 * taken here.
 */

const IPS = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
/** The docs' images are replaced only when asked (UPDATE_SCREENSHOTS=1): a test run leaves the checkout clean. */
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? 'docs/images' : 'build/screenshots';
let database: LocalPostgres;
let browser: Browser;
const instances: ClusterInstance[] = [];
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  [database, browser] = await Promise.all([LocalPostgres.create(), launchChromium()]);
});

afterAll(async () => {
  for (const instance of instances.splice(0)) instance.kill('SIGKILL');
  while (closers.length) await closers.pop()?.();
  await browser?.close();
  await database?.destroy();
});

/** What the page's sharding table shows: item → [status, instance]. */
async function shownSharding(page: Page): Promise<Record<string, [string, string]>> {
  return page.$$eval('#detail tr[data-item]', (rows) =>
    Object.fromEntries(
      rows.map((row) => {
        const cells = row.querySelectorAll('td');
        return [row.getAttribute('data-item')!, [cells[0]!.textContent!.trim(), cells[1]!.textContent!.trim()]];
      }),
    ),
  );
}

async function confirm(page: Page, buttonName: string): Promise<void> {
  await page.getByRole('button', { name: buttonName, exact: true }).click();
  const dialog = page.locator('dialog#confirm');
  await expect.poll(() => dialog.evaluate((element) => (element as HTMLDialogElement).open)).toBe(true);
  await page.getByRole('button', { name: 'Confirm' }).click();
}

describe('web console in a browser, on a three-process cluster', () => {
  it('shows the owners, disables item 2 on the cluster with a click, lists triggered firings', async () => {
    const namespace = uniqueNamespace('console-cluster');
    const port = await findFreePort();
    const cluster = IPS.map(
      (ip, index) =>
        new ClusterInstance({
          zkConnect: zkConnect(),
          namespace,
          jobName: 'nightly-report',
          total: 6,
          cron: '0 0 3 1 1 ?', // once a year: every run in this test comes from the page's triggers
          workMs: 150,
          ip,
          databaseUrl: database.connectionString,
          ...(index === 0 ? { consolePort: port } : {}),
        }),
    );
    instances.push(...cluster);
    await Promise.all(cluster.map((instance) => instance.waitForLine(/^READY$/, 60_000)));
    const operator = await ElasticJobOperator.connect({ serverLists: zkConnect(), namespace });
    closers.push(() => operator.close());

    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    closers.push(() => page.close());
    await page.goto(`http://127.0.0.1:${port}/elastic-job`);
    await expect.poll(() => page.locator('#live').textContent(), { timeout: 20_000 }).toBe('live');
    const open = page.getByRole('button', { name: 'Open job nightly-report' });
    await open.waitFor();
    // Keyboard: the job opens from its focused button with Enter, also after a live update redrew the list under it.
    await open.focus();
    await open.evaluate((element) => element.setAttribute('data-drawn-before', ''));
    await operator.updateJobConfiguration('nightly-report', { description: 'redrawn while focused' });
    await expect.poll(() => page.locator('#jobs-list [data-drawn-before]').count(), { timeout: 20_000 }).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(
      'Open job nightly-report',
    );
    await page.keyboard.press('Enter');
    await page.locator('#detail h2', { hasText: 'nightly-report' }).waitFor();

    // A triggered firing: its six executions appear in the list, pushed to the page.
    await confirm(page, 'Trigger nightly-report');
    await waitForRuns(cluster, () => cluster.flatMap((i) => i.runs()).length >= 6, 30_000, 'the first firing');
    const executionRows = page.locator('#executions tbody tr[data-job="nightly-report"]');
    await expect.poll(() => executionRows.count(), { timeout: 20_000 }).toBe(6);
    await expect
      .poll(() => executionRows.locator('.badge').allTextContents(), { timeout: 20_000 })
      .toEqual(Array(6).fill('SUCCESS'));

    // The owners the page shows are ZooKeeper's: two items on each process.
    const sharding = await operator.getShardingInfo('nightly-report');
    expect(new Set(sharding.map((item) => item.instanceId)).size).toBe(3);
    const expected = Object.fromEntries(sharding.map((item) => [String(item.item), ['PENDING', item.instanceId!]]));
    await expect.poll(() => shownSharding(page), { timeout: 20_000 }).toEqual(expected);
    await page.screenshot({ path: `${SCREENSHOTS}/console-job.png`, fullPage: true });

    // "Disable item 2", confirmed: ZooKeeper has it, the page shows it, and the cluster stops running it.
    await page.getByRole('button', { name: 'Disable item 2' }).click();
    await expect.poll(() => page.locator('#confirm-text').textContent()).toMatch(/Disable item 2 of nightly-report/);
    await page.screenshot({ path: `${SCREENSHOTS}/console-confirm.png` });
    await page.getByRole('button', { name: 'Confirm' }).click();
    await eventually(
      () => operator.getShardingInfo('nightly-report'),
      (items) => items.find((item) => item.item === 2)?.status === 'DISABLED',
      10_000,
      'item 2 disabled in ZooKeeper',
    );
    await expect.poll(async () => (await shownSharding(page))['2']?.[0], { timeout: 20_000 }).toBe('DISABLED');
    await expect.poll(() => page.getByRole('button', { name: 'Enable item 2' }).count()).toBe(1);

    const firstFiring = cluster.flatMap((i) => i.runs()).length;
    await confirm(page, 'Trigger nightly-report');
    await waitForRuns(
      cluster,
      () => cluster.flatMap((i) => i.runs()).length >= firstFiring + 5,
      30_000,
      'the second firing',
    );
    // A third firing as a fence: an item 2 run of the second would have come by the time this one is done.
    await confirm(page, 'Trigger nightly-report');
    await waitForRuns(
      cluster,
      () => cluster.flatMap((i) => i.runs()).length >= firstFiring + 10,
      30_000,
      'the third firing',
    );
    const runs = cluster.flatMap((i) => i.runs());
    expect(runs.filter((run) => run.item === 2)).toHaveLength(1); // the first firing's only
    expect(runs).toHaveLength(16);
    await expect.poll(() => executionRows.count(), { timeout: 20_000 }).toBe(16);
    await expect
      .poll(() => page.locator('#executions tbody tr[data-job="nightly-report"][data-item="2"]').count())
      .toBe(1);
    await page.screenshot({ path: `${SCREENSHOTS}/console-executions.png`, fullPage: true });

    // The configuration, edited: the cron checked as it is typed, the change confirmed as a diff, then written
    // where every process reads it (the next firing runs the new count of items across the cluster).
    await page.getByRole('button', { name: 'Edit configuration' }).click();
    const cronField = page.getByLabel('Cron');
    await cronField.fill('every minute');
    await expect.poll(() => page.locator('#cron-preview .error').textContent()).toMatch(/every minute/);
    await cronField.fill('0 15 2 * * ?');
    await expect.poll(() => page.locator('#cron-preview').textContent()).toMatch(/^Next fire times: \w{3} .*02:15:00/);
    await page.getByLabel('Sharding total count').fill('8');
    await page.getByRole('button', { name: 'Review changes' }).click();
    const diff = page.locator('#confirm-text li');
    await expect
      .poll(() => diff.allTextContents())
      .toEqual(['cron: "0 0 3 1 1 *" → "0 15 2 * * ?"', 'shardingTotalCount: 6 → 8']);
    await page.screenshot({ path: `${SCREENSHOTS}/console-edit.png` });
    await page.getByRole('button', { name: 'Confirm' }).click();
    await eventually(
      () => operator.getJobConfiguration('nightly-report'),
      (config) => config?.shardingTotalCount === 8 && config.cron === '0 15 2 * * *',
      10_000,
      'the edited configuration in ZooKeeper',
    );
    const runsBeforeEdit = cluster.map((instance) => instance.runs().length);
    const beforeEdit = runsBeforeEdit.reduce((sum, n) => sum + n, 0);
    await confirm(page, 'Trigger nightly-report');
    await waitForRuns(
      cluster,
      () => cluster.flatMap((i) => i.runs()).length >= beforeEdit + 7,
      30_000,
      'a firing of eight items (item 2 disabled)',
    );
    const edited = cluster.flatMap((instance, index) => instance.runs().slice(runsBeforeEdit[index]));
    expect(new Set(edited.map((run) => run.item))).toEqual(new Set([0, 1, 3, 4, 5, 6, 7]));
    await expect.poll(async () => Object.keys(await shownSharding(page)).length, { timeout: 20_000 }).toBe(8);

    // On a phone: one column, the same controls.
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    closers.push(() => phone.close());
    await phone.goto(`http://127.0.0.1:${port}/elastic-job#nightly-report`);
    await phone.locator('#detail h2', { hasText: 'nightly-report' }).waitFor();
    await expect.poll(() => phone.locator('#live').textContent(), { timeout: 20_000 }).toBe('live');
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await phone.screenshot({ path: `${SCREENSHOTS}/console-phone.png` });
  });
});

mkdirSync(SCREENSHOTS, { recursive: true });
