import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest, longest first (a quiet run on the 2-core machine, vitest's JSON report of 2026-11-27:
 * packaging about 105 s, more on a fresh clone where it installs its fixture; the chaos seeds about 88 s each; then
 * 46 s down to 13 s). They start first, so that none of them starts late and holds the run up alone; the files not
 * listed (a few seconds each) fill in behind them. Vitest's own order would not do it on a fresh clone: without its
 * cache of durations it runs the largest files first, and a chaos seed is a file of three lines.
 */
const LONGEST_FIRST = [
  'test/integration/packaging.spec.ts',
  'test/faults/chaos-seed-',
  'test/cluster/workflow-faults.spec.ts',
  'test/faults/connection-faults.spec.ts',
  'test/integration/operator.spec.ts',
  'test/cluster/console-browser.spec.ts',
  'test/integration/tracing-mysql.spec.ts',
  'test/cluster/distribute-once.spec.ts',
  'test/integration/alerts.spec.ts',
  'test/cluster/console-failures-browser.spec.ts',
  'test/integration/bad-input.spec.ts',
  'test/faults/ensemble.spec.ts',
  'test/integration/api-docs.spec.ts',
  'test/cluster/quiet-instance.spec.ts',
  'test/integration/tracing.spec.ts',
  'test/integration/lifecycle-interop.spec.ts',
  'test/cluster/cluster.spec.ts',
  'test/integration/typed-jobs.spec.ts',
  'test/cli/cli.spec.ts',
  'test/integration/job-behaviour.spec.ts',
  'test/cluster/retry-reshard.spec.ts',
  'test/cluster/registration-race.spec.ts',
  'test/integration/foreign-writes.spec.ts',
  'test/cluster/failover.spec.ts',
  'test/integration/operator-shutdown.spec.ts',
  'test/unit/docs.spec.ts',
  'test/cli/local-zookeeper.spec.ts',
  'test/integration/bounded-calls.spec.ts',
];

/**
 * Each project's files together (the project of the longest file first), longest first within it. With `isolate:
 * false` vitest keeps a worker for the next file only when that file is of the worker's project (its pool's
 * `schedule()`); otherwise it ends the worker and starts another, which loads Node, vitest, Nest and lib/ again (about
 * 2 CPU-s). The `fast` files interleaved with the `real` ones (test/unit/docs.spec.ts listed above among them) made
 * four switches and 18 workers in a full run (6 + 1 + 1 + 5 + 5); one switch makes at most 12.
 */
export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification): number => {
      const path = relative(spec.project.config.root, spec.moduleId).split('\\').join('/');
      const index = LONGEST_FIRST.findIndex((prefix) => path.startsWith(prefix));
      return index < 0 ? LONGEST_FIRST.length : index;
    };
    const ranked = sorted
      .map((spec, index) => ({ spec, index, rank: rank(spec) }))
      .sort((a, b) => a.rank - b.rank || a.index - b.index);
    const projectOrder = [...new Set(ranked.map(({ spec }) => spec.project.name))];
    const projectRank = (spec: TestSpecification): number => projectOrder.indexOf(spec.project.name);
    return ranked
      .sort((a, b) => projectRank(a.spec) - projectRank(b.spec) || a.rank - b.rank || a.index - b.index)
      .map(({ spec }) => spec);
  }
}
