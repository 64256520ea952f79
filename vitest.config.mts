import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/support/longest-first-sequencer.js';

export default defineConfig({
  // Nest's DI needs decorator metadata; vite 8's oxc transform emits it only when asked (docs/reference/nest-and-peers.md §A3).
  oxc: { decorator: { legacy: true, emitDecoratorMetadata: true } },
  test: {
    include: ['test/**/*.spec.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 90_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Five files at a time on two cores: most of a test's time is spent waiting (cron seconds, session timeouts,
    // other processes), so the cores are about three quarters busy. Each file has its own namespace on the one
    // ZooKeeper (fault tests start their own servers), and its timing assertions have margins measured under this load.
    maxWorkers: 5,
    sequence: { hooks: 'stack', sequencer: LongestFirstSequencer },
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
