import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * What `npm publish` would ship, from a fresh `npm run build`: the license, source maps a debugger can follow
 * without the TypeScript sources (inlined), the CLI with its shebang, and every document the declarations cite.
 */

interface PackedFile {
  path: string;
}

describe('the package as published', () => {
  it('ships LICENSE, self-contained source maps, the CLI, and every document its declarations cite', () => {
    execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'ignore' });
    const [pack] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json'], { encoding: 'utf8' })) as Array<{
      files: PackedFile[];
    }>;
    const files = new Set(pack!.files.map((file) => file.path));
    expect(files.has('LICENSE')).toBe(true);
    expect(readFileSync('LICENSE', 'utf8')).toContain('Apache License');

    const maps = [...files].filter((path) => path.endsWith('.js.map'));
    expect(maps.length).toBeGreaterThan(50);
    for (const path of maps) {
      const map = JSON.parse(readFileSync(path, 'utf8')) as { sources: string[]; sourcesContent?: unknown[] };
      expect(map.sourcesContent?.length, path).toBe(map.sources.length);
      expect(
        map.sourcesContent?.every((content) => typeof content === 'string' && content.length > 0),
        path,
      ).toBe(true);
    }

    const bin = (JSON.parse(readFileSync('package.json', 'utf8')) as { bin: Record<string, string> }).bin;
    const cli = bin['nestjs-elastic-job']!.replace(/^\.\//, '');
    expect(files.has(cli)).toBe(true);
    expect(readFileSync(cli, 'utf8').startsWith('#!/usr/bin/env node')).toBe(true);

    const cited = new Set<string>();
    for (const path of [...files].filter((file) => file.endsWith('.d.ts'))) {
      for (const match of readFileSync(path, 'utf8').matchAll(/\bdocs\/[\w./-]+\.md\b/g)) cited.add(match[0]);
    }
    expect(cited.size).toBeGreaterThan(0);
    expect([...cited].filter((doc) => !files.has(doc))).toEqual([]);
  });
});
