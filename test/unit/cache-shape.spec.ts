import { describe, expect, it } from 'vitest';
import { JobNodePath } from '../../lib/job/paths.js';

/** What a job's cache reads of each node (JobNodePath.cacheShape): the table the cache's read savings rest on. */
const paths = new JobNodePath('report');
const DIRECTORY = { data: false, children: true };
const ANNOUNCED = { data: false, children: false };
const LEAF = { data: true, children: false };

describe('JobNodePath.cacheShape', () => {
  it.each([
    ['/report', { data: true, children: true }],
    ['/report/config', LEAF],
    ['/report/servers', DIRECTORY],
    ['/report/servers/10.0.0.1', LEAF],
    ['/report/instances', DIRECTORY],
    ['/report/instances/10.0.0.1@-@42', { data: 'lazy', children: false }],
    ['/report/sharding', DIRECTORY],
    ['/report/sharding/3', DIRECTORY],
    ['/report/sharding/3/instance', LEAF],
    ['/report/sharding/3/running', { data: 'lazy', children: false }],
    ['/report/sharding/3/misfire', ANNOUNCED],
    ['/report/sharding/3/failover', LEAF],
    ['/report/sharding/3/disabled', LEAF],
    ['/report/shardingx/3', LEAF],
    ['/report/leader', DIRECTORY],
    ['/report/leader/election/instance', LEAF],
    ['/report/leader/election/latch', DIRECTORY],
    ['/report/leader/election/latch/_c_abc-latch-0000000001', ANNOUNCED],
    ['/report/leader/election/latch/x/y', 'ignore'],
    ['/report/leader/sharding/necessary', ANNOUNCED],
    ['/report/leader/sharding/processing', ANNOUNCED],
    ['/report/leader/failover/latch', 'ignore'],
    ['/report/leader/failover/latch/_c_x-latch-1', 'ignore'],
    ['/report/leader/failover/items/3', LEAF],
    ['/report/trigger', DIRECTORY],
    ['/report/trigger/10.0.0.1@-@42', ANNOUNCED],
    ['/report/guarantee', DIRECTORY],
    ['/report/guarantee/started', DIRECTORY],
    ['/report/guarantee/started/2', ANNOUNCED],
    ['/report/guarantee/completed/2', ANNOUNCED],
    ['/report/guarantee/started-latch', 'ignore'],
    ['/report/guarantee/completed-latch/_c_x-latch-1', 'ignore'],
  ])('%s', (path, shape) => {
    expect(paths.cacheShape(path)).toEqual(shape);
  });
});
