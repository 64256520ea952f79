import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { uniqueNamespace, zkConnect } from '../support/zk.js';

/**
 * What `npm publish` would ship, from a fresh `npm run build`, and that it works where users put it: the license,
 * source maps a debugger can follow without the TypeScript sources (inlined), the CLI with its shebang, every
 * document the declarations cite; and a CommonJS build that a Nest 11 app made by `nest new` (tsc to CommonJS with
 * TypeScript 5.0, Jest with ts-jest) compiles against, runs with, and tests with (test/fixtures/nest11-cjs).
 */

interface PackedFile {
  path: string;
}

const FIXTURE = resolve('test/fixtures/nest11-cjs');

let files: Set<string>;
let tarball: string;

beforeAll(() => {
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'ignore' });
  const destination = mkdtempSync(join(tmpdir(), 'nestjs-elastic-job-pack-'));
  const [pack] = JSON.parse(
    // Built just above: the package's prepack (the same build, for `npm pack` and `npm publish`) is not run twice.
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination], {
      encoding: 'utf8',
    }),
  ) as Array<{ filename: string; files: PackedFile[] }>;
  files = new Set(pack!.files.map((file) => file.path));
  tarball = join(destination, pack!.filename);
});

describe('the package as published', () => {
  it('ships LICENSE, self-contained source maps, the CLI, and every document its declarations cite', () => {
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

  it('keeps optional integrations behind their own entry points: the core never imports them', () => {
    const exportsMap = (JSON.parse(readFileSync('package.json', 'utf8')) as { exports: Record<string, unknown> })
      .exports;
    expect(Object.keys(exportsMap)).toEqual([
      '.',
      './terminus',
      './opentelemetry',
      './postgres',
      './microservices',
      './console',
      './package.json',
    ]);
    for (const entry of ['dist/terminus/index.js', 'dist/cjs/terminus/index.js', 'dist/terminus/index.d.ts'])
      expect(files.has(entry), entry).toBe(true);
    const optional = ['@nestjs/terminus', '@opentelemetry/', 'pg', '@nestjs/microservices'];
    for (const entry of ['dist/index.js', 'dist/cjs/index.js']) {
      const imported = bareImports(entry);
      expect(imported.has('@nestjs/common'), entry).toBe(true); // the walk does reach the core's imports
      expect(
        [...imported].filter((name) => optional.some((prefix) => name === prefix || name.startsWith(prefix))),
        entry,
      ).toEqual([]);
    }
    expect(bareImports('dist/terminus/index.js').has('@nestjs/terminus')).toBe(true);
    expect(bareImports('dist/opentelemetry/index.js').has('@opentelemetry/api')).toBe(true);
    expect(bareImports('dist/postgres/index.js').has('pg')).toBe(true);
    expect(bareImports('dist/microservices/index.js').has('@nestjs/microservices')).toBe(true);
    // The console needs nothing beyond the core's peers, and its browser script's DOM types stay in its own file.
    for (const entry of ['dist/console/index.js', 'dist/cjs/console/index.js', 'dist/console/index.d.ts'])
      expect(files.has(entry), entry).toBe(true);
    const domTyped = [...files].filter(
      (file) => file.endsWith('.d.ts') && readFileSync(file, 'utf8').includes('reference lib="dom"'),
    );
    expect(domTyped.filter((file) => !file.endsWith('console/page/console-app.d.ts'))).toEqual([]);
  });

  it('works in a Nest 11 CommonJS app: compiled by TypeScript 5.0 (its declarations checked too, an entry point other than the main one included), run by Node, tested by Jest in its default mode', () => {
    const installed = installPackedLibrary();

    rmSync(join(FIXTURE, 'dist'), { recursive: true, force: true });
    // Built, and the published declarations checked as an app that checks its libraries compiles them, in one
    // compilation instead of two (the first, with skipLibCheck, took 6-13 s of this test on a loaded machine).
    execFileSync(
      process.execPath,
      ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--skipLibCheck', 'false'],
      fixtureRun(),
    );

    const env = { ...process.env, ZK_CONNECT: zkConnect(), ZK_NAMESPACE: uniqueNamespace('cjs-app') };
    const ran = JSON.parse(
      execFileSync(process.execPath, ['dist/main.js'], { ...fixtureRun(), env, encoding: 'utf8' }),
    ) as { loaded: string; items: string[] };
    expect(ran.loaded).toBe(join(installed, 'dist', 'cjs', 'index.js'));
    expect(ran.items).toEqual(['0=eu', '1=us', '2=ap']);

    const jestEnv = { ...env, ZK_NAMESPACE: uniqueNamespace('cjs-jest') };
    const jest = spawnSync(process.execPath, ['node_modules/jest/bin/jest.js', '--ci'], {
      ...fixtureRun(),
      env: jestEnv,
      encoding: 'utf8',
    });
    expect(jest.status, jest.stderr).toBe(0);
    expect(jest.stderr).toMatch(/Tests:\s+2 passed, 2 total/);
  }, 240_000);

  it("type-checks in an ES-module app (TypeScript 5.0, nodenext, strict, declarations checked): the exports map's types", () => {
    installPackedLibrary();
    const app = mkdtempSync(join(tmpdir(), 'nestjs-elastic-job-esm-app-'));
    try {
      mkdirSync(join(app, 'src'));
      symlinkSync(join(FIXTURE, 'node_modules'), join(app, 'node_modules'));
      writeFileSync(join(app, 'package.json'), JSON.stringify({ type: 'module' }));
      writeFileSync(
        join(app, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'nodenext',
            moduleResolution: 'nodenext',
            target: 'ES2022',
            strict: true,
            noEmit: true,
            skipLibCheck: false,
            experimentalDecorators: true,
            types: ['node'],
          },
          include: ['src'],
        }),
      );
      writeFileSync(
        join(app, 'src', 'app.ts'),
        [
          "import { ElasticJobModule, type ShardingContext } from 'nestjs-elastic-job';",
          "import type { ElasticJobConsoleOptions } from 'nestjs-elastic-job/console';",
          "export const settings: ElasticJobConsoleOptions = { path: 'jobs' };",
          'export const item = (context: ShardingContext): number => context.shardingItem;',
          'export const module = ElasticJobModule;',
          '',
        ].join('\n'),
      );
      const listed = execFileSync(
        process.execPath,
        [join(FIXTURE, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json', '--listFiles'],
        { cwd: app, timeout: 120_000, encoding: 'utf8' },
      );
      // The ES-module declarations (dist/), not the CommonJS ones typesVersions names for node10.
      expect(listed).toMatch(/nestjs-elastic-job\/dist\/console\/index\.d\.ts/);
      expect(listed).not.toMatch(/nestjs-elastic-job\/dist\/cjs\//);
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  }, 240_000);
});

/** The packed tarball unpacked into the fixture's node_modules (its dependencies installed first); its path. */
function installPackedLibrary(): string {
  installFixtureDependencies();
  const installed = join(FIXTURE, 'node_modules', 'nestjs-elastic-job');
  rmSync(installed, { recursive: true, force: true });
  mkdirSync(installed);
  execFileSync('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
  return installed;
}

/** The packages a built file imports or requires, following its relative imports through the whole graph. */
function bareImports(entry: string): Set<string> {
  const seen = new Set<string>();
  const bare = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(file, 'utf8');
    for (const match of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\(\s*)["']([^"']+)["']/g)) {
      const specifier = match[1]!;
      if (specifier.startsWith('.')) visit(join(dirname(file), specifier));
      else if (!specifier.startsWith('node:')) bare.add(specifier);
    }
  };
  visit(entry);
  return bare;
}

function fixtureRun(): { cwd: string; timeout: number } {
  return { cwd: FIXTURE, timeout: 120_000 };
}

/** `npm ci` in the fixture when its node_modules is missing or older than its lockfile (as tools/ensure-deps.mjs). */
function installFixtureDependencies(): void {
  const marker = join(FIXTURE, 'node_modules', '.package-lock.json');
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(join(FIXTURE, 'package-lock.json')).mtimeMs) return;
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { ...fixtureRun(), stdio: 'ignore' });
}
