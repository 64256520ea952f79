import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { anchorsOf, checkCitations, checkLinks, checkSnippets, docFiles } from '../../tools/check-docs.mjs';

/**
 * The docs' checks (tools/check-docs.mjs): README.md, CONTRIBUTING.md and docs/ link only to what exists, and every
 * TypeScript example in them compiles against the library. A planted broken page shows each check can fail.
 */

const root = process.cwd();

describe('the documentation', () => {
  it('has no relative link or anchor that points at nothing', () => {
    expect(docFiles(root)).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'docs/README.md']));
    expect(checkLinks(root)).toEqual([]);
  });

  it('has every page and heading the code cites (`docs/guide/console.md, "Security"`)', () => {
    expect(checkCitations(root)).toEqual([]);
  });

  it('has TypeScript examples that type-check against the library', () => {
    expect(checkSnippets(root)).toEqual([]);
  });

  it('keeps the README to what a visitor reads first (two screens, about 150 lines)', () => {
    expect(readFileSync('README.md', 'utf8').split('\n').length).toBeLessThanOrEqual(150);
  });
});

describe('the docs checks', () => {
  mkdirSync(join(root, 'build'), { recursive: true });
  const dir = mkdtempSync(join(root, 'build', 'docs-check-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const plant = (name: string, text: string): string => {
    writeFileSync(join(dir, name), text);
    return relative(root, join(dir, name));
  };

  it("reads GitHub's anchors: punctuation dropped, code spans kept as text, repeats numbered", () => {
    const anchors = anchorsOf(
      "# Web console (`nestjs-elastic-job/console`)\n## Errors of the operator's surfaces\n## Options\n## Options\n" +
        '```bash\n# not a heading\n```\n',
    );
    expect([...anchors]).toEqual([
      'web-console-nestjs-elastic-jobconsole',
      'errors-of-the-operators-surfaces',
      'options',
      'options-1',
    ]);
  });

  it('finds a missing file, a missing anchor, and ignores links inside code', () => {
    const target = plant('target.md', '# Target\n\n## A section\n');
    const page = plant(
      'page.md',
      '[ok](target.md#a-section) [gone](nowhere.md) [bad anchor](target.md#no-such) [self](#page)\n\n' +
        '`[in code](nowhere.md)`\n\n```md\n[in a fence](nowhere.md)\n```\n\n# Page\n',
    );
    expect(checkLinks(root, [page, target])).toEqual([
      `${page}:1: nowhere.md (no such file)`,
      `${page}:1: target.md#no-such (no heading '#no-such' in ${target})`,
    ]);
  });

  it('reports a TypeScript example that does not compile, at its line in the page', () => {
    const page = plant(
      'snippet.md',
      '# Snippet\n\n```ts\n' +
        "import { ElasticJobModule } from 'nestjs-elastic-job';\n" +
        "ElasticJobModule.forRoot({ zookeeper: { serverList: 'zk:2181', namespace: 'x' } });\n" +
        '```\n',
    );
    const problems = checkSnippets(root, [page]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      new RegExp(`^${page.replace(/[.]/g, '\\.')}:5: error TS\\d+: .*'serverList' does not exist`),
    );
  });
});
