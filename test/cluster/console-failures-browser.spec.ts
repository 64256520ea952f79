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
 * on its owner only, and succeeds.
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
  it('lists the failed item with its stack from the instances, and runs it again on its owner', async () => {
    const namespace = uniqueNamespace('console-failures');
    const port = await findFreePort();
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
          ...(index === 0 ? { consolePort: port } : {}),
        }),
    );
    instances.push(...cluster);
    await Promise.all(cluster.map((instance) => instance.waitForLine(/^READY$/, 60_000)));
    const operator = await ElasticJobOperator.connect({ serverLists: zkConnect(), namespace });
    try {
      await operator.trigger('invoice-export');
      const runs = () => cluster.flatMap((instance) => instance.runs());
      await waitForRuns(cluster, () => runs().length >= 6, 30_000, 'the firing');
      const owner = cluster.find((instance) => instance.runs().some((run) => run.item === 2 && run.failed))!;

      const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
      await page.goto(`http://127.0.0.1:${port}/elastic-job`);
      await expect.poll(() => page.locator('#live').textContent(), { timeout: 20_000 }).toBe('live');
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
      await page.close();
    } finally {
      await operator.close();
    }
  });
});
