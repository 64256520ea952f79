import { javaAbs, javaStringHashCode } from '../../util/java-hash.js';
import type {
  JobInstance,
  JobShardingStrategy,
  ShardingStrategyType,
} from '../../interfaces/sharded-job-options.interface.js';

/**
 * ElasticJob's AVG_ALLOCATION: contiguous blocks of floor(total / n) in input order, the remainder one each to
 * the first instances. With ElasticJob's descending input, 3 instances × 8 items give .3=[0,1,6] .2=[2,3,7] .1=[4,5].
 */
export function averageAllocation(instances: readonly JobInstance[], total: number): Map<string, number[]> {
  const result = new Map<string, number[]>();
  if (instances.length === 0) return result;
  const n = instances.length;
  const per = Math.floor(total / n);
  instances.forEach((instance, index) => {
    const items: number[] = [];
    for (let item = index * per; item < (index + 1) * per; item++) items.push(item);
    result.set(instance.jobInstanceId, items);
  });
  const remainder = total % n;
  for (let index = 0; index < remainder; index++) {
    result.get(instances[index]!.jobInstanceId)!.push(per * n + index);
  }
  return result;
}

export const AVG_ALLOCATION: JobShardingStrategy = {
  type: 'AVG_ALLOCATION',
  sharding: (instances, _jobName, total) => averageAllocation(instances, total),
};

/** ElasticJob's ODEVITY: reverse the input when the job name's Java hashCode is even, then AVG_ALLOCATION. */
export const ODEVITY: JobShardingStrategy = {
  type: 'ODEVITY',
  sharding: (instances, jobName, total) =>
    averageAllocation(javaStringHashCode(jobName) % 2 === 0 ? [...instances].reverse() : instances, total),
};

/** ElasticJob's ROUND_ROBIN: rotate the input by |hashCode| mod n (Java's Math.abs), then AVG_ALLOCATION. */
export const ROUND_ROBIN: JobShardingStrategy = {
  type: 'ROUND_ROBIN',
  sharding: (instances, jobName, total) => {
    const n = instances.length;
    if (n === 0) return new Map();
    const offset = javaAbs(javaStringHashCode(jobName)) % n;
    const rotated = offset === 0 ? instances : instances.map((_, i) => instances[(i + offset) % n]!);
    return averageAllocation(rotated, total);
  },
};

export const BUILT_IN_SHARDING_STRATEGIES: Readonly<Record<ShardingStrategyType, JobShardingStrategy>> = {
  AVG_ALLOCATION,
  ODEVITY,
  ROUND_ROBIN,
};
