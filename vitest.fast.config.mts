import { defineConfig } from 'vitest/config';

/**
 * `npm run test:fast`: the tests that need no server, no process and no compiled fixture (pure logic, and the job's
 * state machines on the in-memory registry), without the global set-up of vitest.config.mts that compiles the
 * project and starts ZooKeeper. For the inner loop; `npm test` runs everything.
 */
export default defineConfig({
  // Nest's DI needs decorator metadata; vite 8's oxc transform emits it only when asked (as vitest.config.mts).
  oxc: { decorator: { legacy: true, emitDecoratorMetadata: true } },
  test: {
    include: ['test/unit/**/*.spec.ts', 'test/cli/cli-parts.spec.ts'],
    testTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
