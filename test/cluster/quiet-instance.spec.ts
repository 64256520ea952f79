import { afterEach, describe, expect, it } from 'vitest';
import { RegistryError } from '../../lib/errors/elastic-job.errors.js';
import type { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import { ClusterInstance, waitForRuns } from '../support/cluster.js';
import { eventually, startRegistry, uniqueNamespace, zkConnect } from '../support/zk.js';

const instances: ClusterInstance[] = [];
const registries: ZookeeperRegistryCenter[] = [];

afterEach(async () => {
  for (const instance of instances.splice(0)) instance.kill('SIGKILL');
  for (const registry of registries.splice(0)) await registry.close();
});

describe('an instance that owns no item', () => {
  it('keeps its session: 3 instances, a 2-item every-second job, 6 s sessions, 24 s without a session change', async () => {
    // The idle instance only hears its peers' marker events and sends nothing of its own: it must ping anyway
    // (node-zookeeper-client pings only when the socket is idle both ways, so it never did). Without the ping the
    // server expires its session one session timeout after its last request: four timeouts of watching show it.
    const namespace = uniqueNamespace('quiet');
    const cluster = Array.from(
      { length: 3 },
      () => new ClusterInstance({ zkConnect: zkConnect(), namespace, total: 2, sessionTimeoutMs: 6000 }),
    );
    instances.push(...cluster);
    await Promise.all(cluster.map((instance) => instance.waitForLine(/^READY$/, 60_000)));
    const zk = await startRegistry({ namespace });
    registries.push(zk);
    // The test's own client only observes: a connection it loses (a loaded host) is waited out, the read done again.
    const exists = async (path: string): ReturnType<typeof zk.exists> => {
      for (;;) {
        try {
          return await zk.exists(path);
        } catch (error) {
          if (!(error instanceof RegistryError) || error.code !== 'CONNECTION_LOSS') throw error;
          await zk.waitForConnection(30_000);
        }
      }
    };
    const owners = async (): Promise<Map<string, string>> => {
      const result = new Map<string, string>();
      for (const instance of cluster) {
        const stat = await exists(`/cluster-job/instances/${instance.instanceId()}`);
        result.set(instance.instanceId()!, stat?.ephemeralOwner ?? 'missing');
      }
      return result;
    };
    // Settled: the two items ran on two different instances in one firing, so the third owns nothing.
    let settledAt = 0;
    await waitForRuns(
      cluster,
      () => {
        const recent = cluster.filter((instance) => instance.runs().some((run) => run.start >= Date.now() - 1500));
        if (recent.length === 2) settledAt = Date.now();
        return settledAt > 0;
      },
      30_000,
      'two instances running one item each',
    );
    const before = await eventually(
      owners,
      (map) => [...map.values()].every((owner) => owner !== 'missing'),
      10_000,
      'three instance nodes',
    );
    const linesAtStart = cluster.map((instance) => instance.lines.length);
    const changes: string[] = [];
    const deadline = Date.now() + 4 * 6000;
    while (Date.now() < deadline) {
      // Sampled every 2 s: a session change shows as another owner, or a missing node, at some sample.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      for (const [id, owner] of await owners())
        if (owner !== before.get(id)) changes.push(`${id}: ${before.get(id)} -> ${owner}`);
    }
    const sessionLogs = cluster.flatMap((instance, index) =>
      instance.lines.slice(linesAtStart[index]).filter((line) => /session .* lost|new session/.test(line)),
    );
    expect(sessionLogs).toEqual([]);
    // One instance stayed idle throughout (the situation under test).
    expect(cluster.filter((instance) => instance.runs().some((run) => run.start >= settledAt)).length).toBe(2);
    expect(changes).toEqual([]);
    expect(await owners()).toEqual(before);
  }, 120_000);
});
