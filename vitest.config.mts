import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/support/longest-first-sequencer.js';

/** The tests that need no server, no process and no compiled fixture (`npm run test:fast` runs only these). */
export const FAST_TESTS = ['test/unit/**/*.spec.ts', 'test/cli/cli-parts.spec.ts'];

export default defineConfig({
  // Nest's DI needs decorator metadata; vite 8's oxc transform emits it only when asked (docs/reference/nest-and-peers.md §A3).
  oxc: { decorator: { legacy: true, emitDecoratorMetadata: true } },
  test: {
    testTimeout: 90_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // The workers without V8's optimizing tier, as the Node processes the tests start (CHILD_NODE_FLAGS in
    // test/support/line-process.ts): a worker's CPU goes to loading modules, the ZooKeeper client's encoding and short
    // test bodies, where TurboFan's compiles cost more than they save. Six real files, A/B twice on the 2-core machine:
    // 23.7/25.6 -> 19.2/18.7 worker CPU-s; six others 30.9/29.6 -> 23.8/25.8. What the code does is the same in
    // every tier.
    execArgv: ['--no-opt'],
    // Six files at a time on two cores: most of a test's time is spent waiting (cron seconds, session timeouts,
    // other processes), so the cores are about three quarters busy at five. Each file has its own namespace on the one
    // ZooKeeper (fault tests start their own servers), and its timing assertions have margins measured under this load.
    maxWorkers: 6,
    // A worker runs file after file in one process, loading Nest and lib/ once: every file cleans up what it starts
    // (apps, sessions, processes, spies, fake timers) in its hooks, so nothing carries over. Per-file processes
    // cost a third of the suite's CPU.
    isolate: false,
    sequence: { hooks: 'stack', sequencer: LongestFirstSequencer },
    // SUITE_CPU_LOG=<file> logs each file's CPU seconds, its child processes' included (nothing when unset).
    setupFiles: ['test/support/cpu-per-file.ts', 'test/support/zookeeper-session-guard.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'real',
          // Every file, the fast ones included: `npm test` runs this project alone (tools/test.mjs), so the fast files
          // fill in behind the long ones in the same workers, where a project of their own started more workers (each
          // loads Node, vitest, Nest and lib/ again: about 2 CPU-s). `fast` is for `npm run test:fast`.
          include: ['test/**/*.spec.ts'],
          // One ZooKeeper for the run, and the fixtures child processes run compiled (test/support/global-setup.ts).
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
      { extends: true, test: { name: 'fast', include: FAST_TESTS } },
    ],
  },
});
