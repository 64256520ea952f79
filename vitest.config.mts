import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Nest's DI needs decorator metadata; vite 8's oxc transform emits it only when asked (docs/reference/nest-and-peers.md §A3).
  oxc: { decorator: { legacy: true, emitDecoratorMetadata: true } },
  test: {
    include: ['test/**/*.spec.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 90_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two cores: cluster tests spawn several Node processes each; run files one or two at a time.
    maxWorkers: 2,
    sequence: { hooks: 'stack' },
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
