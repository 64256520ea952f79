import { describe, expect, it } from 'vitest';
import { ServerStatisticsApi } from '../../lib/lifecycle/server-statistics.api.js';
import { FakeZookeeper } from '../support/fake-registry.js';

/** getJobServersInfo: each server's status stays its own when the servers are sorted (children come unsorted). */
describe('ServerStatisticsApi.getJobServersInfo', () => {
  it('keeps each status and instance with its server, sorted by IP, whatever order ZooKeeper lists them in', async () => {
    const zk = new FakeZookeeper();
    const registry = await zk.connect('ns');
    const text = (value: string): Buffer => Buffer.from(value);
    await registry.createWithParents('/report/config', text('cron: 0 0 3 * * ?\n'), 'PERSISTENT');
    // Listed in creation order by the fake server: the reverse of IP order.
    await registry.createWithParents('/report/servers/10.0.0.9', text('DISABLED'), 'PERSISTENT');
    await registry.createWithParents('/report/servers/10.0.0.1', text('ENABLED'), 'PERSISTENT');
    await registry.createWithParents('/report/instances/10.0.0.9@-@9', text('serverIp: 10.0.0.9\n'), 'EPHEMERAL');
    await registry.createWithParents('/report/instances/10.0.0.1@-@1', text('serverIp: 10.0.0.1\n'), 'EPHEMERAL');
    expect(await registry.getChildren('/report/servers')).toEqual(['10.0.0.9', '10.0.0.1']);

    const api = new ServerStatisticsApi(registry);
    expect(await api.getJobServersInfo('report')).toEqual([
      { serverIp: '10.0.0.1', status: 'ENABLED', instances: ['10.0.0.1@-@1'] },
      { serverIp: '10.0.0.9', status: 'DISABLED', instances: ['10.0.0.9@-@9'] },
    ]);
    expect(await api.getJobServersInfo('nope')).toBeUndefined();
    await registry.close();
  });
});
