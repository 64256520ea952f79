import { execFile, execFileSync, spawnSync } from 'node:child_process';
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
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LineProcess } from '../support/line-process.js';
import { startRegistry, uniqueNamespace, zkConnect } from '../support/zk.js';

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
const execFileAsync = promisify(execFile);

let files: Set<string>;
let tarball: string;
/** The packed library unpacked into the fixture's node_modules, where every app below resolves it. */
const INSTALLED = join(FIXTURE, 'node_modules', 'nestjs-elastic-job');

/** The TypeScript 5.0 projects the tests compile (each test checks its own), by what they are. */
const projects = {
  // The Nest 11 app, its libraries' declarations checked (tsconfig.check.json: its tsconfig.json, skipLibCheck off).
  cjsFixture: join(FIXTURE, 'tsconfig.check.json'),
  esmCheck: '',
  gettingStartedCommonJs: '',
  gettingStartedEsm: '',
};
type Project = keyof typeof projects;
const scratch: string[] = [];
let compiled: Map<Project, string[]>;

// The fixture's own install (a fresh clone's first run: npm ci, mostly network) alongside the build, once for the file
// rather than in the first test that needs it, so that a slow install is one wait, not a timeout in each test.
// Then the apps of the tests below, compiled by ONE `tsc --build` (TypeScript's multi-project mode): the four
// programs share the declaration files they read (parsed and bound once for the projects of one module format, with
// one compiler start), where four `tsc -p` runs took 28 CPU-s between them; each program is still checked and emitted
// as `tsc -p` does it, and each test judges its own project's output.
beforeAll(async () => {
  await Promise.all([
    installFixtureDependencies(),
    (async () => {
      await execFileAsync('npm', ['run', '--silent', 'build']);
      const destination = mkdtempSync(join(tmpdir(), 'nestjs-elastic-job-pack-'));
      scratch.push(destination);
      const [pack] = JSON.parse(
        // Built just above: the package's prepack (the same build, for `npm pack` and `npm publish`) is not run twice.
        (await execFileAsync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination])).stdout,
      ) as Array<{ filename: string; files: PackedFile[] }>;
      files = new Set(pack!.files.map((file) => file.path));
      tarball = join(destination, pack!.filename);
    })(),
  ]);
  installPackedLibrary();
  rmSync(join(FIXTURE, 'dist'), { recursive: true, force: true });
  projects.esmCheck = esmCheckApp();
  [projects.gettingStartedCommonJs, projects.gettingStartedEsm] = (['CommonJS', 'ES modules'] as const).map(
    gettingStartedApp,
  );
  compiled = await compileAll();
}, 600_000);

afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
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
      './mysql',
      './package.json',
    ]);
    for (const entry of ['dist/terminus/index.js', 'dist/cjs/terminus/index.js', 'dist/terminus/index.d.ts'])
      expect(files.has(entry), entry).toBe(true);
    const optional = ['@nestjs/terminus', '@opentelemetry/', 'pg', '@nestjs/microservices', 'mysql2'];
    for (const entry of ['dist/index.js', 'dist/cjs/index.js']) {
      const imported = bareImports(entry);
      expect(imported.has('@nestjs/common'), entry).toBe(true); // the walk does reach the core's imports
      expect(
        [...imported].filter((name) => optional.some((prefix) => name === prefix || name.startsWith(prefix))),
        entry,
      ).toEqual([]);
    }
    // nodemailer (EMAIL alerts, an optional peer) is loaded by the core only when an EMAIL handler first sends.
    const esm = readFileSync('dist/job/alerts/email-alerts.js', 'utf8');
    expect(esm).not.toMatch(/\bfrom\s*['"]nodemailer['"]/);
    expect(esm.match(/\bimport\(\s*['"]nodemailer['"]\s*\)/g)).toHaveLength(1);
    const cjs = readFileSync('dist/cjs/job/alerts/email-alerts.js', 'utf8');
    expect(cjs.match(/require\(['"]nodemailer['"]\)/g)).toHaveLength(1);
    expect(cjs).toMatch(/Promise\.resolve\(\)\.then\(\(\) => __importStar\(require\(['"]nodemailer['"]\)\)\)/);
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
      dependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    expect(manifest.dependencies.nodemailer).toBeUndefined();
    expect(manifest.peerDependenciesMeta.nodemailer).toEqual({ optional: true });
    expect(bareImports('dist/terminus/index.js').has('@nestjs/terminus')).toBe(true);
    expect(bareImports('dist/opentelemetry/index.js').has('@opentelemetry/api')).toBe(true);
    expect(bareImports('dist/postgres/index.js').has('pg')).toBe(true);
    expect(bareImports('dist/mysql/index.js').has('mysql2/promise')).toBe(true);
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
    // Built, and the published declarations checked as an app that checks its libraries compiles them, in one
    // compilation instead of two (the first, with skipLibCheck, took 6-13 s of this test on a loaded machine).
    expectCompiled('cjsFixture');

    const env = { ...process.env, ZK_CONNECT: zkConnect(), ZK_NAMESPACE: uniqueNamespace('cjs-app') };
    const ran = JSON.parse(
      execFileSync(process.execPath, ['dist/main.js'], { ...fixtureRun(), env, encoding: 'utf8' }),
    ) as { loaded: string; items: string[] };
    expect(ran.loaded).toBe(join(INSTALLED, 'dist', 'cjs', 'index.js'));
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
    const listed = expectCompiled('esmCheck').join('\n');
    // The ES-module declarations (dist/), not the CommonJS ones typesVersions names for node10.
    expect(listed).toMatch(/nestjs-elastic-job\/dist\/console\/index\.d\.ts/);
    expect(listed).not.toMatch(/nestjs-elastic-job\/dist\/cjs\//);
  });
  it("builds and runs Getting started's two apps from the page's own code blocks: CommonJS (nest new) and ES modules", async () => {
    const page = readFileSync('docs/getting-started.md', 'utf8');
    expect(page).toContain('`"type": "module"` in `package.json`');
    // As the page says: npx tsc -p tsconfig.json (compiled with the others in beforeAll) && node dist/main.js, with
    // ZK_CONNECT set. Each app under a chroot of its own, so that the page's namespace is the test's and the two apps
    // are not one cluster.
    const apps = (['CommonJS', 'ES modules'] as const).map((system) => {
      const project = system === 'CommonJS' ? 'gettingStartedCommonJs' : 'gettingStartedEsm';
      expectCompiled(project);
      return { system, app: dirname(projects[project]) };
    });
    const runs = [];
    for (const { system, app } of apps) {
      const chroot = uniqueNamespace('getting-started');
      await (await startRegistry({ namespace: chroot })).close();
      const env = { ...process.env, ZK_CONNECT: `${zkConnect()}/${chroot}`, NO_COLOR: '1' };
      runs.push({ system, run: new LineProcess(process.execPath, [join(app, 'dist', 'main.js')], env) });
    }
    try {
      for (const { system, run } of runs) {
        // The four items of the first firing (every 10 s), each logged by the page's job.
        const items = new Set<string>();
        await run.waitForLine((line) => {
          const item = /\[RegionReportJob\] item (\d): (\S+)/.exec(line);
          if (item) items.add(`${item[1]}=${item[2]}`);
          return items.size === 4;
        }, 60_000);
        expect([...items].sort(), system).toEqual(['0=eu-west', '1=eu-central', '2=us-east', '3=ap-south']);
      }
    } finally {
      for (const { run } of runs) run.child.kill('SIGTERM');
      for (const { system, run } of runs) {
        await run.exited; // Nest's shutdown hooks close the app, then raise the signal again
        expect(run.stderr, system).toBe('');
        expect(
          run.lines.some((line) => /\[ElasticJob:region-report\] shut down/.test(line)),
          system,
        ).toBe(true);
      }
    }
  }, 240_000);
});

/** A page's fenced blocks whose first line is a comment naming them (`// main.ts (CommonJS)`), by that name. */
function namedBlocks(page: string): Map<string, string> {
  const blocks = new Map<string, string>();
  for (const match of page.matchAll(/^```\w+\n\/\/ ([^\n]+)\n[\s\S]*?^```$/gm)) {
    const [block, name] = match;
    blocks.set(name!.trim(), `${block.slice(block.indexOf('\n') + 1, block.lastIndexOf('```'))}`);
  }
  return blocks;
}

/** The packed tarball unpacked into the fixture's node_modules (its dependencies installed in beforeAll). */
function installPackedLibrary(): void {
  rmSync(INSTALLED, { recursive: true, force: true });
  mkdirSync(INSTALLED);
  execFileSync('tar', ['-xzf', tarball, '-C', INSTALLED, '--strip-components=1']);
}

/** A scratch app with the fixture's node_modules (the packed library in it), the files given; its tsconfig's path. */
function scratchApp(prefix: string, appFiles: Record<string, string>): string {
  const app = mkdtempSync(join(tmpdir(), prefix));
  scratch.push(app);
  mkdirSync(join(app, 'src'));
  symlinkSync(join(FIXTURE, 'node_modules'), join(app, 'node_modules'));
  for (const [path, text] of Object.entries(appFiles)) writeFileSync(join(app, path), text);
  return join(app, 'tsconfig.json');
}

/** An ES-module app (TypeScript 5.0, nodenext, strict, declarations checked) using the main and a subpath export. */
function esmCheckApp(): string {
  const compilerOptions = {
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'ES2022',
    strict: true,
    noEmit: true,
    skipLibCheck: false,
    experimentalDecorators: true,
    types: ['node'],
    listFiles: true, // which declarations it read: tsc's --listFiles, which `tsc --build` takes from here
  };
  return scratchApp('nestjs-elastic-job-esm-app-', {
    'package.json': JSON.stringify({ type: 'module' }),
    'tsconfig.json': JSON.stringify({ compilerOptions, include: ['src'] }),
    'src/app.ts': [
      "import { ElasticJobModule, type ShardingContext } from 'nestjs-elastic-job';",
      "import type { ElasticJobConsoleOptions } from 'nestjs-elastic-job/console';",
      "export const settings: ElasticJobConsoleOptions = { path: 'jobs' };",
      'export const item = (context: ShardingContext): number => context.shardingItem;',
      'export const module = ElasticJobModule;',
      '',
    ].join('\n'),
  });
}

/** Getting started's app for one module system, from the page's own code blocks. */
function gettingStartedApp(system: 'CommonJS' | 'ES modules'): string {
  const blocks = namedBlocks(readFileSync('docs/getting-started.md', 'utf8'));
  return scratchApp('nestjs-elastic-job-getting-started-', {
    // What `npm init` writes now, or what the page asks of an ES-module app.
    'package.json': JSON.stringify({ type: system === 'CommonJS' ? 'commonjs' : 'module' }),
    'tsconfig.json': blocks.get(`tsconfig.json (${system})`)!,
    'src/app.module.ts': blocks.get('app.module.ts')!,
    'src/region-report.job.ts': blocks.get('region-report.job.ts')!,
    'src/main.ts': blocks.get(`main.ts (${system})`)!,
  });
}

/**
 * Every project compiled by TypeScript 5.0's `tsc --build --verbose` in one process; what it printed while building
 * each (its errors, and its files where it lists them), by project. `--force`: a project is always built.
 */
async function compileAll(): Promise<Map<Project, string[]>> {
  const tsconfigs = Object.values(projects);
  const { stdout } = await execFileAsync(
    process.execPath,
    [
      join(FIXTURE, 'node_modules/typescript/bin/tsc'),
      '--build',
      '--verbose',
      '--force',
      '--pretty',
      'false',
      ...tsconfigs,
    ],
    { cwd: FIXTURE, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 },
  ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? String(error) })); // errors: judged per test
  const byProject = new Map<Project, string[]>();
  let current: string[] | undefined;
  for (const line of stdout.split('\n')) {
    const building = / - Building project '([^']+)'\.\.\.$/.exec(line);
    if (building) {
      const project = (Object.keys(projects) as Project[]).find(
        (key) => resolve(FIXTURE, building[1]!) === projects[key],
      );
      current = [];
      if (project) byProject.set(project, current);
    } else if (/^\S.* - (Projects? |Skipping |Updating )/.test(line)) {
      current = undefined; // build mode's own lines about the next project
    } else current?.push(line);
  }
  return byProject;
}

/** The project was compiled without an error; what tsc printed for it. */
function expectCompiled(project: Project): string[] {
  const printed = compiled.get(project);
  expect(printed, `${project}: never built by tsc --build`).toBeDefined();
  expect(
    printed!.filter((line) => /error TS\d+/.test(line)),
    project,
  ).toEqual([]);
  return printed!;
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

/**
 * `npm ci` in the fixture when its node_modules is missing or older than its lockfile (as tools/ensure-deps.mjs).
 * `--prefer-offline`: the lockfile pins every tarball by integrity, so one already in npm's cache is used without
 * asking the registry whether it changed (a fresh clone on a machine that installed it before: 18 -> 13 CPU-s); one
 * not in the cache is downloaded as before.
 */
async function installFixtureDependencies(): Promise<void> {
  const marker = join(FIXTURE, 'node_modules', '.package-lock.json');
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(join(FIXTURE, 'package-lock.json')).mtimeMs) return;
  await execFileAsync('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: FIXTURE, timeout: 540_000 });
}
