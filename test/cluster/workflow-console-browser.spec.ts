import 'reflect-metadata';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ElasticJobConsoleModule } from '../../lib/console/index.js';
import { ElasticJobModule, ElasticJobOperator, ShardedJob, type ShardingContext } from '../../lib/index.js';
import { appOptions } from '../support/app.js';
import { launchChromium } from '../support/local-chromium.js';
import { uniqueNamespace } from '../support/zk.js';

/**
 * The console's workflow view in a real browser (docs/guide/workflows.md, "In the console"): the DAG drawn, a step's
 * state followed live (running, then completed, with no reload), a failed step re-run from its button, and a step
 * opening its job's panel. Its screenshot is docs/images/console-workflows.png with UPDATE_SCREENSHOTS=1.
 */

/** The docs' images are replaced only when asked (UPDATE_SCREENSHOTS=1): a test run leaves the checkout clean. */
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? 'docs/images' : 'build/screenshots';
mkdirSync(SCREENSHOTS, { recursive: true });

let browser: Browser;
let app: INestApplication | undefined;
/** Releases the items of `transform` held once started. */
let releaseTransform: () => void = () => undefined;
const transformHeld = new Promise<void>((resolve) => (releaseTransform = resolve));
/** `audit`'s item 0 fails on its first run only. */
let auditFailed = false;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  // The page first: its live stream would hold the app's HTTP server open.
  await browser?.close();
  releaseTransform();
  await app?.close();
});

@Injectable()
class NightlyJobs {
  @ShardedJob({ jobName: 'extract', oneOff: true, shardingTotalCount: 2 })
  extract(): void {}

  @ShardedJob({ jobName: 'transform', oneOff: true, shardingTotalCount: 2 })
  transform(): Promise<void> {
    return transformHeld;
  }

  @ShardedJob({ jobName: 'audit', oneOff: true, shardingTotalCount: 2 })
  audit(context: ShardingContext): void {
    if (context.shardingItem === 0 && !auditFailed) {
      auditFailed = true;
      throw new Error('audit: 3 rows without a price');
    }
  }

  @ShardedJob({ jobName: 'load', oneOff: true, shardingTotalCount: 1 })
  load(): void {}
}

describe('workflows in the console, in a browser', () => {
  it('draws the DAG, follows a step live, re-runs a failed step and opens a step', async () => {
    const namespace = uniqueNamespace('workflow-browser');
    @Module({
      imports: [
        ElasticJobModule.forRoot(
          appOptions(namespace, {
            workflows: [
              {
                name: 'nightly',
                steps: { extract: [], transform: ['extract'], audit: ['extract'], load: ['transform', 'audit'] },
              },
            ],
          }),
        ),
        ElasticJobConsoleModule.forRoot({ actions: true }),
      ],
      providers: [NightlyJobs],
    })
    class ConsoleApp {}
    app = await NestFactory.create(ConsoleApp, { logger: ['error'] });
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as AddressInfo;
    const operator = app.get(ElasticJobOperator);

    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await page.goto(`http://127.0.0.1:${port}/elastic-job`);
    await expect.poll(() => page.locator('#live').textContent(), { timeout: 20_000 }).toBe('live');
    // The DAG: four steps in three columns, an edge per parent.
    const dag = page.locator('#workflows article[data-workflow="nightly"] svg.dag');
    await expect.poll(() => dag.locator('g.step').count(), { timeout: 20_000 }).toBe(4);
    const edges = await dag
      .locator('path.edge')
      .evaluateAll((paths) =>
        paths.map((path) => `${path.getAttribute('data-from')}->${path.getAttribute('data-to')}`).sort(),
      );
    expect(edges).toEqual(['audit->load', 'extract->audit', 'extract->transform', 'transform->load']);
    const x = (step: string) => dag.locator(`g[data-step="${step}"] rect`).getAttribute('x');
    expect(new Set([await x('transform'), await x('audit')]).size).toBe(1);
    expect(Number(await x('load'))).toBeGreaterThan(Number(await x('transform')));
    const stepState = (step: string) => dag.locator(`g[data-step="${step}"]`).getAttribute('data-state');
    expect(await stepState('extract')).toBe('NO RUN');

    // A run from its button: transform is seen running, then completed when its items are let go; the page is
    // never reloaded, so each state comes from the live stream.
    await page.getByRole('button', { name: 'Trigger workflow nightly' }).click();
    await page.getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(() => stepState('transform'), { timeout: 30_000 }).toBe('RUNNING');
    await expect.poll(() => stepState('audit'), { timeout: 30_000 }).toBe('FAILED');
    expect(await stepState('extract')).toBe('COMPLETED');
    expect(await stepState('load')).toBe('PENDING');
    await page
      .locator('section[aria-labelledby="workflows-title"]')
      .screenshot({ path: `${SCREENSHOTS}/console-workflows.png` });
    releaseTransform();
    await expect.poll(() => stepState('transform'), { timeout: 30_000 }).toBe('COMPLETED');
    const [run] = await operator.getWorkflowRuns('nightly');
    const row = page.locator(`#workflows tr[data-run="${run!.id}"]`);
    await expect.poll(() => row.getAttribute('data-state'), { timeout: 30_000 }).toBe('FAILED');
    expect(await stepState('load')).toBe('PENDING');

    // The failed step re-run from its button (its failed items): the run goes on and completes.
    await page.getByRole('button', { name: `Re-run failed items of audit in run ${run!.id}` }).click();
    await expect.poll(() => page.locator('#confirm-text').textContent()).toMatch(/failed items \(0\) of audit/);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(() => row.getAttribute('data-state'), { timeout: 30_000 }).toBe('COMPLETED');
    expect(await stepState('load')).toBe('COMPLETED');
    expect((await operator.getWorkflowRuns('nightly'))[0]!.steps.audit).toMatchObject({
      state: 'COMPLETED',
      attempts: 2,
    });

    // A step opens its job's panel (its items and failures): by a click, or from the keyboard.
    await dag.locator('g[data-step="audit"]').click();
    await page.locator('#detail h2', { hasText: 'audit' }).waitFor();
    // The keyboard: a focused step keeps the focus while a live update redraws the DAG under it (a new run changes
    // every step's state), and Enter opens it. Without the focus given back, Enter fell on the page's body.
    const load = dag.locator('g[data-step="load"]');
    await load.focus();
    await load.evaluate((node) => node.setAttribute('data-drawn-before', ''));
    await operator.triggerWorkflow('nightly');
    await expect.poll(() => dag.locator('g[data-drawn-before]').count(), { timeout: 30_000 }).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-step'))).toBe('load');
    await page.keyboard.press('Enter');
    await page.locator('#detail h2', { hasText: 'load' }).waitFor();
    // On a phone's width the page does not scroll sideways: the DAG scrolls in its own box.
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.close();
  });
});
