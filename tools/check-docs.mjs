// The docs' checks (CONTRIBUTING.md, "Docs"): every relative link and anchor in README.md, CONTRIBUTING.md and
// docs/ resolves, every page the code cites exists, and every ```ts block of the docs type-checks against the
// library. Run by test/unit/docs.spec.ts (so by `npm test` and `npm run test:fast`), or alone:
// `node tools/check-docs.mjs`.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The research notes and the spec are sources, cited as they were written: their links and Java are not checked. */
const NOT_CHECKED = ['docs/reference/', 'docs/SPEC.md', 'docs/api/'];

/** README.md, CONTRIBUTING.md and every Markdown file under docs/ (but NOT_CHECKED), as paths relative to root. */
export function docFiles(root) {
  const found = ['README.md', 'CONTRIBUTING.md'].filter((file) => existsSync(join(root, file)));
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (NOT_CHECKED.some((skip) => path === skip || `${path}/` === skip || path.startsWith(skip))) continue;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  if (existsSync(join(root, 'docs'))) walk('docs');
  return found;
}

/** Lines outside fenced code blocks, with their 1-based numbers; inline code spans blanked out. */
function proseLines(text) {
  const out = [];
  let fence = false;
  text.split('\n').forEach((line, index) => {
    if (/^\s*```/.test(line)) fence = !fence;
    else if (!fence) out.push({ line: line.replace(/`[^`]*`/g, (span) => ' '.repeat(span.length)), number: index + 1 });
  });
  return out;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2, ... */
export function anchorsOf(text) {
  const anchors = new Set();
  const seen = new Map();
  let fence = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fence = !fence;
    const heading = !fence && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const plain = heading[1].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = plain
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Every relative link or image of `files` (default: the checked files) that points at nothing: `file:line: target (why)`. */
export function checkLinks(root, files = docFiles(root)) {
  const problems = [];
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const { line, number } of proseLines(text)) {
      for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        const target = match[1];
        if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto:
        const [pathPart, anchor] = target.split('#', 2);
        const resolved = pathPart === '' ? join(root, file) : resolve(dirname(join(root, file)), pathPart);
        const where = `${file}:${number}: ${target}`;
        if (!resolved.startsWith(resolve(root))) problems.push(`${where} (outside the repository)`);
        else if (!existsSync(resolved)) problems.push(`${where} (no such file)`);
        else if (anchor !== undefined) {
          if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
            problems.push(`${where} (an anchor into what is not a Markdown file)`);
          } else if (!anchorsOf(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor))) {
            problems.push(`${where} (no heading '#${anchor}' in ${relative(root, resolved)})`);
          }
        }
      }
    }
  }
  return problems;
}

/** Source folders whose comments cite the docs. */
const CITING = ['lib', 'test', 'tools', 'bench', 'sample', '.ci'];

/**
 * Every citation of a page in the code's comments and messages (`docs/guide/console.md, "Security"`) whose page,
 * or quoted heading, is not there: `file:line: citation`.
 */
export function checkCitations(root) {
  const problems = [];
  const walk = (dir) =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
      const path = `${dir}/${entry.name}`;
      if (entry.name === 'node_modules' || entry.name === 'fixtures') return [];
      if (entry.isDirectory()) return walk(path);
      return /\.(ts|mts|mjs|js|sh)$|^run$/.test(entry.name) ? [path] : [];
    });
  for (const file of CITING.filter((dir) => existsSync(join(root, dir))).flatMap(walk)) {
    readFileSync(join(root, file), 'utf8')
      .split('\n')
      .forEach((line, index) => {
        for (const match of line.matchAll(/\b(docs\/[\w./-]+\.md)(?:, "([^"]+)")?/g)) {
          const [citation, page, heading] = match;
          const path = join(root, page);
          const slug = heading && [...anchorsOf(`# ${heading}`)][0];
          if (!existsSync(path)) problems.push(`${file}:${index + 1}: ${citation} (no such page)`);
          else if (slug && !anchorsOf(readFileSync(path, 'utf8')).has(slug) && !heading.endsWith(' ')) {
            problems.push(`${file}:${index + 1}: ${citation} (no such heading in ${page})`);
          }
        }
      });
  }
  return problems;
}

/**
 * The ```ts blocks of the checked files, each a module of its own: `{ file, line, name, code }`. A block whose
 * first line is a comment naming a file (`// app.module.ts`) is written under that name, so the blocks of one page
 * can import each other as an app's files do.
 */
export function typeScriptBlocks(root, files = docFiles(root)) {
  const blocks = [];
  for (const file of files) {
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    for (let start = 0; start < lines.length; start++) {
      if (!/^```(ts|typescript)\s*$/.test(lines[start])) continue;
      let end = start + 1;
      while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
      const code = lines.slice(start + 1, end).join('\n');
      const named = /^\/\/ ([\w.-]+\.ts)\b/.exec(lines[start + 1] ?? '');
      blocks.push({ file, line: start + 2, name: named?.[1], code });
      start = end;
    }
  }
  return blocks;
}

/**
 * Type-checks every ```ts block against lib/ (`nestjs-elastic-job` and its entry points mapped to the sources) with
 * the library's compiler options, the names examples leave to the reader declared in docs/snippet-globals.d.ts.
 * Returns tsc's errors as `file.md:line: message`.
 */
export function checkSnippets(root, files = docFiles(root)) {
  const blocks = typeScriptBlocks(root, files);
  if (blocks.length === 0) return [];
  mkdirSync(join(root, 'build'), { recursive: true });
  const dir = mkdtempSync(join(root, 'build', 'doc-snippets-'));
  try {
    const origin = new Map();
    blocks.forEach((block, index) => {
      const page = block.file.replace(/[^\w]+/g, '_');
      // A name taken on the page (`// main.ts (CommonJS)` beside `// main.ts (ES modules)`): the later one is a block.
      const named = block.name !== undefined && !origin.has(join(page, block.name));
      const path = join(page, named ? block.name : `block-${index}.ts`);
      mkdirSync(join(dir, page), { recursive: true });
      // `export {}` makes a block without imports a module too (its top-level await and names stay its own).
      writeFileSync(join(dir, path), `${block.code}\nexport {};\n`);
      origin.set(path, block);
    });
    const fromDir = (path) => relative(dir, join(root, path));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: fromDir('tsconfig.json'),
        compilerOptions: {
          noEmit: true,
          rootDir: fromDir('.'),
          // An example may show an import or a parameter it does not use.
          noUnusedLocals: false,
          noUnusedParameters: false,
          types: ['node'],
          paths: {
            'nestjs-elastic-job': [fromDir('lib/index.ts')],
            'nestjs-elastic-job/*': [fromDir('lib/*/index.ts')],
          },
        },
        include: ['**/*.ts', fromDir('docs/snippet-globals.d.ts'), fromDir('lib/types')],
      }),
    );
    const tsc = join(root, 'node_modules', '.bin', 'tsc');
    let output = '';
    try {
      execFileSync(tsc, ['-p', join(dir, 'tsconfig.json'), '--pretty', 'false'], { encoding: 'utf8', cwd: dir });
    } catch (error) {
      output = `${error.stdout ?? ''}${error.stderr ?? ''}`;
    }
    return output
      .split('\n')
      .filter((line) => line.trim() !== '' && !/^\s/.test(line)) // tsc's indented notes follow their error
      .map((line) => {
        const at = /^(.+?)\((\d+),(\d+)\): (.*)$/.exec(line);
        const block = at && origin.get(relative(dir, resolve(dir, at[1])));
        return block ? `${block.file}:${block.line + Number(at[2]) - 1}: ${at[4]}` : line;
      });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const problems = [...checkLinks(root), ...checkCitations(root), ...checkSnippets(root)];
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  process.stderr.write(
    problems.length === 0 ? 'docs: links and snippets ok\n' : `docs: ${problems.length} problem(s)\n`,
  );
  process.exitCode = problems.length === 0 ? 0 : 1;
}
