import { Logger } from '@nestjs/common';
import { describe, expect, it, vi } from 'vitest';
import { JobRows } from '../../lib/console/job-rows.js';
import { NamespaceFollower } from '../../lib/console/namespace-follower.js';
import type { ElasticJobOperator } from '../../lib/lifecycle/elastic-job-operator.js';
import type { JobBriefInfo } from '../../lib/lifecycle/lifecycle.types.js';

/** The console's state, a value per concern (issue 28): its job rows and its namespace watch, on a scripted operator. */

const brief = (jobName: string): JobBriefInfo => ({
  jobName,
  status: 'OK',
  description: '',
  cron: '0 0 0 1 1 *',
  instanceCount: 1,
  shardingTotalCount: 1,
});

describe('JobRows', () => {
  it('reads everything once, then only the jobs marked; a failed read stays to be read again', async () => {
    const reads: string[] = [];
    let failNext = false;
    const operator = {
      getAllJobsBriefInfo: async () => (reads.push('*'), [brief('a'), brief('b')]),
      getJobBriefInfo: async (name: string) => {
        reads.push(name);
        if (failNext) throw new Error('connection lost');
        return name === 'gone' ? undefined : brief(name);
      },
      getJobConfiguration: async () => ({ timeZone: undefined }),
    } as unknown as ElasticJobOperator;
    const rows = new JobRows(() => operator);
    expect((await rows.current(true)).map((row) => row.jobName)).toEqual(['a', 'b']);
    await rows.current(true); // nothing marked: no read
    expect(reads).toEqual(['*']);

    rows.mark(['b', 'gone']);
    expect((await rows.current(true)).map((row) => row.jobName)).toEqual(['a', 'b']);
    expect(reads).toEqual(['*', 'b', 'gone']);

    failNext = true;
    rows.mark(['a']);
    await expect(rows.current(true)).rejects.toThrow('connection lost');
    failNext = false;
    await rows.current(true);
    expect(reads).toEqual(['*', 'b', 'gone', 'a', 'a']);

    await rows.current(false); // no watch: everything, every time
    expect(reads.at(-1)).toBe('*');
  });
});

describe('NamespaceFollower', () => {
  it('starts one watch for requests at once; says a failure once until it works; never starts once closed', async () => {
    const logger = new Logger('test');
    const warn = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    let calls = 0;
    let fail = true;
    const closed: number[] = [];
    const operator = {
      watch: async () => {
        calls++;
        if (fail) throw new Error('ZooKeeper away');
        return { close: () => closed.push(calls) };
      },
    } as unknown as ElasticJobOperator;
    const started: number[] = [];
    const follower = new NamespaceFollower(
      () => operator,
      () => undefined,
      () => started.push(calls),
      () => 0,
      logger,
    );
    await Promise.all([follower.ensure(), follower.ensure()]);
    await follower.ensure();
    expect(calls).toBe(2); // one attempt for the two requests at once, one more for the next request
    expect(warn).toHaveBeenCalledTimes(1);
    fail = false;
    await Promise.all([follower.ensure(), follower.ensure()]);
    expect([calls, follower.following, started]).toEqual([3, true, [3]]);
    await follower.ensure();
    expect(calls).toBe(3);
    follower.close();
    expect([follower.following, closed]).toEqual([false, [3]]);
    await follower.ensure();
    expect(calls).toBe(3);
  });
});
