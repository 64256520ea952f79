import { Injectable, Logger } from '@nestjs/common';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ElasticJobOrchestrator } from '../../lib/elastic-job.orchestrator.js';
import { ShardedJob } from '../../lib/index.js';
import { appOptions, bootApp } from '../support/app.js';
import { hold, releaseAll } from '../support/resources.js';
import { uniqueNamespace } from '../support/zk.js';

/** A warning when Nest's shutdown hooks are off (issue 14, item 7): peers would wait a session timeout. */

afterEach(async () => {
  await releaseAll();
  vi.restoreAllMocks();
});

@Injectable()
class QuietJob {
  @ShardedJob({ jobName: 'quiet', cron: '0 0 0 1 1 *', shardingTotalCount: 1 })
  run(): void {}
}

const HOOKS_WARNING = 'shutdown hooks are not enabled (app.enableShutdownHooks())';

async function warningsWith(sigtermListeners: number): Promise<string[]> {
  const listenerCount = process.listenerCount.bind(process);
  vi.spyOn(process, 'listenerCount').mockImplementation((event: string | symbol) =>
    event === 'SIGTERM' ? sigtermListeners : listenerCount(event),
  );
  const warn = vi.spyOn(Logger.prototype, 'warn');
  const app = await bootApp(appOptions(uniqueNamespace('hooks')), [QuietJob]);
  hold(() => app.close());
  await app.get(ElasticJobOrchestrator).shutdownHooksCheck.promise; // the check has run (a second after bootstrap)
  return warn.mock.calls.map((call) => String(call[0]));
}

describe('shutdown hooks', () => {
  it('warns when no SIGTERM listener (Nest shutdown hooks) is there a moment after bootstrap', async () => {
    expect((await warningsWith(0)).filter((line) => line.startsWith(HOOKS_WARNING))).toHaveLength(1);
  });

  it('says nothing when they are enabled', async () => {
    expect((await warningsWith(1)).filter((line) => line.startsWith(HOOKS_WARNING))).toEqual([]);
  });
});
