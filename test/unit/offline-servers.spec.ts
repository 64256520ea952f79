import { describe, expect, it } from 'vitest';
import type { JobContext } from '../../lib/job/context/job-context.js';
import { JobNodePath } from '../../lib/job/paths.js';
import { ServerService } from '../../lib/job/server/server.service.js';

/** A job context whose cache and ZooKeeper say what the test gives (only what removeOfflineServers reaches). */
function context(cache: Map<string, string>, liveInZookeeper: string[], removed: string[]): JobContext {
  const paths = new JobNodePath('job');
  const children = (dir: string): string[] =>
    [...cache.keys()].filter((path) => path.startsWith(`${dir}/`)).map((path) => path.slice(dir.length + 1));
  return {
    paths,
    storage: {
      cached: { children, get: (path: string) => cache.get(path) },
      direct: { children: async () => liveInZookeeper },
      remove: async (path: string) => void removed.push(path),
    },
  } as unknown as JobContext;
}

describe('ServerService.removeOfflineServers', () => {
  it('keeps a server whose instance ZooKeeper lists though the cache has not applied it yet (a peer registering)', async () => {
    const removed: string[] = [];
    // The peer's server node is in the cache; its instance node, written in the same transaction, not yet.
    const cache = new Map([['/job/servers/10.0.0.9', 'ENABLED']]);
    await new ServerService(context(cache, ['10.0.0.9@-@9'], removed)).removeOfflineServers();
    expect(removed).toEqual([]);
  });

  it('removes a server with a value and no live instance, as ElasticJob 3.0.5 does', async () => {
    const removed: string[] = [];
    const cache = new Map([
      ['/job/servers/10.0.0.8', 'ENABLED'],
      ['/job/servers/10.0.0.9', ''],
      ['/job/servers/10.0.0.1', 'ENABLED'],
      ['/job/instances/10.0.0.1@-@1', ''],
    ]);
    await new ServerService(context(cache, ['10.0.0.1@-@1'], removed)).removeOfflineServers();
    expect(removed).toEqual(['/job/servers/10.0.0.8']);
  });
});
