import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ElasticJobConsoleModule } from '../../lib/console/index.js';
import { ElasticJobModule, ElasticJobRegistry, ShardedJob, type ShardingContext } from '../../lib/index.js';
import { appOptions } from '../support/app.js';
import { launchChromium } from '../support/local-chromium.js';
import { uniqueNamespace } from '../support/zk.js';

/**
 * The item policies in the console, in a real browser (docs/guide/item-policies.md): a running item's progress in the
 * job's sharding table, and an execution's log lines fetched when its "Log" cell is opened.
 */

let browser: Browser;
let app: INestApplication | undefined;
const releases: Array<() => void> = [];

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  // The page first: its live stream would hold the app's HTTP server open.
  await browser?.close();
  for (const release of releases) release();
  await app?.close();
});

@Injectable()
class ImportJob {
  @ShardedJob({ jobName: 'import', cron: '0 0 3 1 1 ?', shardingTotalCount: 1 })
  async run(context: ShardingContext): Promise<void> {
    context.logger.log('reading the feed');
    context.logger.warn('row 17 skipped: no price');
    context.reportProgress({ rows: 17, of: 40 });
    await new Promise<void>((resolve) => releases.push(resolve));
    context.logger.log('row 40 done');
    await new Promise<void>((resolve) => releases.push(resolve));
  }
}

describe('item policies in the console, in a browser', () => {
  it("shows a running item's progress and an execution's lines", async () => {
    const namespace = uniqueNamespace('item-browser');
    @Module({
      imports: [ElasticJobModule.forRoot(appOptions(namespace)), ElasticJobConsoleModule.forRoot({})],
      providers: [ImportJob],
    })
    class ConsoleApp {}
    app = await NestFactory.create(ConsoleApp, { logger: ['error'] });
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as AddressInfo;
    await app.get(ElasticJobRegistry).trigger('import');

    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await page.goto(`http://127.0.0.1:${port}/elastic-job`);
    await expect.poll(() => page.locator('#live').textContent(), { timeout: 20_000 }).toBe('live');
    await page.getByRole('button', { name: 'Open job import' }).click();
    await page.locator('#detail h2', { hasText: 'import' }).waitFor();
    // The progress: read when the detail is (re)loaded; a reload of the page asks again.
    await expect
      .poll(
        async () => {
          const text = await page.locator('#detail tr[data-item="0"] td.progress').textContent();
          if (text?.trim() !== 'rows=17 of=40') {
            await page.reload();
            await page.getByRole('button', { name: 'Open job import' }).click();
            await page.locator('#detail h2', { hasText: 'import' }).waitFor();
          }
          return page.locator('#detail tr[data-item="0"] td.progress').textContent();
        },
        { timeout: 30_000 },
      )
      .toBe('rows=17 of=40');
    // The running execution's lines, fetched when its Log cell opens.
    const log = page.locator('#executions tbody tr[data-job="import"] td.lines details');
    await expect.poll(() => log.count(), { timeout: 20_000 }).toBe(1);
    await log.locator('summary').click();
    await expect
      .poll(() => log.locator('pre').textContent(), { timeout: 20_000 })
      .toMatch(/LOG reading the feed\n.* WARN row 17 skipped: no price$/);
    // Followed while it runs: a line logged later shows in the open cell.
    releases.shift()!();
    await expect.poll(() => log.locator('pre').textContent(), { timeout: 20_000 }).toMatch(/LOG row 40 done$/);
    await page.close();
  });
});
