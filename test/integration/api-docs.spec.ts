import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `npm run docs:api` (tools/api-docs/build.mjs): TypeDoc renders the TSDoc of every entry point of the package. Its
 * first run installs TypeDoc from tools/api-docs' lockfile (it needs TypeScript 6's API; the library builds with 7).
 */
describe('the API reference', () => {
  const out = mkdtempSync(join(tmpdir(), 'api-docs-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('is generated from the TSDoc, one module per entry point, without errors', () => {
    // --skipErrorChecking: TypeDoc's own type check of the program before it renders (TypeScript's pre-emit
    // diagnostics of all lib/, 7-8 of its 19 CPU-s) repeats the one the suite's setup has just run on the same files
    // (test/support/global-setup.ts: tsc -p tsconfig.json, a type error fails the run). TypeDoc's own errors still
    // fail it, and its warnings are still printed.
    const log = execFileSync(process.execPath, ['tools/api-docs/build.mjs', '--out', out, '--skipErrorChecking'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 180_000,
    });
    expect(log).toMatch(/html generated/); // TypeDoc exits non-zero on an error, which throws above
    for (const entry of ['', '_terminus', '_opentelemetry', '_postgres', '_microservices', '_console', '_mysql']) {
      expect(existsSync(join(out, 'modules', `nestjs-elastic-job${entry}.html`)), entry).toBe(true);
    }
    const operator = readFileSync(join(out, 'classes', 'nestjs-elastic-job.ElasticJobOperator.html'), 'utf8');
    expect(operator).toContain('getAllJobsBriefInfo');
    expect(operator).toContain('ElasticJob'); // its TSDoc, not only its signature
    expect(existsSync(join(out, 'functions', 'nestjs-elastic-job.ShardedJob.html'))).toBe(true);
  }, 240_000);
});
