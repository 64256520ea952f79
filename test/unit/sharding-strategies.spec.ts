import { describe, expect, it } from 'vitest';
import { AVG_ALLOCATION, ODEVITY, ROUND_ROBIN } from '../../lib/job/plugins/sharding-strategies.js';
import { validateShardingResult } from '../../lib/job/sharding/sharding.service.js';
import type { JobInstance } from '../../lib/interfaces/sharded-job-options.interface.js';
import { javaAbs, javaStringHashCode } from '../../lib/util/java-hash.js';

// ElasticJob's input order: instances/ children in descending string order (.3, .2, .1).
const instances: JobInstance[] = [3, 2, 1].map((n) => ({
  jobInstanceId: `192.168.0.${n}@-@100${n}`,
  serverIp: `192.168.0.${n}`,
}));
const short = (result: Map<string, number[]>): Record<string, number[]> =>
  Object.fromEntries([...result].map(([id, items]) => [`.${id.split('@-@')[0]!.split('.')[3]}`, items]));

describe('Java semantics', () => {
  it('String.hashCode with int overflow', () => {
    expect(javaStringHashCode('myJob')).toBe(104343153);
    expect(javaStringHashCode('orderJob')).toBe(1234284943);
    expect(javaStringHashCode('test_job')).toBe(-1146456432);
    expect(javaStringHashCode('javaSimpleJob')).toBe(-694093655);
  });
  it('Math.abs(Integer.MIN_VALUE) stays negative', () => {
    expect(javaAbs(-2147483648)).toBe(-2147483648);
    expect(javaAbs(-5)).toBe(5);
  });
});

// Golden vectors of docs/reference/elasticjob.md §3.
describe('golden vectors', () => {
  const avg8 = { '.3': [0, 1, 6], '.2': [2, 3, 7], '.1': [4, 5] };
  it.each([
    ['myJob', 8, avg8, avg8, avg8],
    [
      'myJob',
      10,
      { '.3': [0, 1, 2, 9], '.2': [3, 4, 5], '.1': [6, 7, 8] },
      { '.3': [0, 1, 2, 9], '.2': [3, 4, 5], '.1': [6, 7, 8] },
      { '.3': [0, 1, 2, 9], '.2': [3, 4, 5], '.1': [6, 7, 8] },
    ],
    ['orderJob', 8, avg8, avg8, { '.2': [0, 1, 6], '.1': [2, 3, 7], '.3': [4, 5] }],
    ['test_job', 8, avg8, { '.1': [0, 1, 6], '.2': [2, 3, 7], '.3': [4, 5] }, avg8],
    [
      'javaSimpleJob',
      2,
      { '.3': [0], '.2': [1], '.1': [] },
      { '.3': [0], '.2': [1], '.1': [] },
      { '.1': [0], '.3': [1], '.2': [] },
    ],
  ])('%s × %i items', (job, total, avg, odevity, roundRobin) => {
    expect(short(AVG_ALLOCATION.sharding(instances, job, total))).toEqual(avg);
    expect(short(ODEVITY.sharding(instances, job, total))).toEqual(odevity);
    expect(short(ROUND_ROBIN.sharding(instances, job, total))).toEqual(roundRobin);
  });

  it('keeps ROUND_ROBIN rotation order (insertion order of the result)', () => {
    expect(Object.keys(short(ROUND_ROBIN.sharding(instances, 'orderJob', 8)))).toEqual(['.2', '.1', '.3']);
  });

  it('no instances, no items', () => {
    expect(AVG_ALLOCATION.sharding([], 'x', 4).size).toBe(0);
    expect(ROUND_ROBIN.sharding([], 'x', 4).size).toBe(0);
  });
});

describe('validateShardingResult', () => {
  it('accepts a full assignment and names what is wrong otherwise', () => {
    expect(validateShardingResult(AVG_ALLOCATION.sharding(instances, 'x', 5), instances, 5)).toBeUndefined();
    expect(validateShardingResult(new Map([[instances[0]!.jobInstanceId, [0, 0]]]), instances, 2)).toMatch(/twice/);
    expect(validateShardingResult(new Map([[instances[0]!.jobInstanceId, [0]]]), instances, 2)).toMatch(/unassigned/);
    expect(validateShardingResult(new Map([['ghost', [0]]]), instances, 1)).toMatch(/unknown instance/);
  });
});
