// The layer rule of lib/ (CONTRIBUTING: "Layers"): a folder imports only from the folders below it, never up and never
// round in a cycle, so that the core can be read, tested and reused from the bottom up. Run by `npm run lint`:
//   node tools/check-layers.mjs [libDir]
// prints each import that breaks the rule and exits 1, or exits 0.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * lib/'s folders, lowest first: each may import from the folders of earlier lines. '.' is the module (the files at
 * lib/'s top). The last line's folders are the integrations: each may import anything below the module, and the
 * module, but not another integration. Within job/, cli/ and console/ the subfolders have lines of their own, the
 * files at their top being the folder's own unit.
 */
export const LAYERS = [
  ['errors'],
  ['util', 'types', 'devtools'],
  ['schedule'],
  ['registry'],
  ['events'],
  ['interfaces'],
  ['tracing'],
  ['decorators'],
  // A job's concerns, as ElasticJob's kernel/internal packages: the paths, then storage, events and plugins, the
  // context they make, each concern over those before it, and the scheduler that puts a job together.
  // job/alerts: the alert handlers' channels (EMAIL, WECHAT, DINGTALK, WEBHOOK), below the plugins that name them.
  ['job', 'job/alerts'],
  ['job/events', 'job/plugins', 'job/storage', 'job/policies'],
  ['job/context'],
  ['job/config'],
  ['job/server'],
  ['job/instance'],
  ['job/election'],
  ['job/execution'],
  ['job/failover'],
  ['job/sharding', 'job/guarantee'],
  ['job/executor', 'job/history', 'job/reaction', 'job/reconcile', 'job/trigger'],
  ['job/scheduler'],
  // Workflows: one-off jobs run as a graph, over the jobs' paths and events; the operator API drives them.
  ['listeners', 'workflow'],
  ['lifecycle'],
  ['.'],
  ['cli/format', 'console/model'],
  ['cli/commands', 'console/page'],
  ['cli', 'console', 'microservices', 'postgres', 'terminus', 'opentelemetry', 'mysql'],
];

/** Folders whose subfolders are layered on their own lines above (files at their top are the folder's own unit). */
const SPLIT = new Set(['cli', 'console', 'job']);

/** The unit a file belongs to: its top folder under lib (or '.'), or `job/config` for a split folder's subfolder. */
export function unitOf(file) {
  const parts = file.split('/');
  if (parts.length === 1) return '.';
  if (SPLIT.has(parts[0]) && parts.length > 2) return `${parts[0]}/${parts[1]}`;
  return parts[0];
}

const RANK = new Map(LAYERS.flatMap((units, rank) => units.map((unit) => [unit, rank])));
const INTEGRATIONS = new Set(LAYERS.at(-1).map((unit) => unit.split('/')[0]));

/** Why `from` may not import `to`, or undefined when it may. */
export function arrowProblem(from, to) {
  if (from === to) return undefined;
  const [a, b] = [RANK.get(from), RANK.get(to)];
  if (a === undefined) return `${from}/ has no layer: add it to LAYERS in tools/check-layers.mjs`;
  if (b === undefined) return `${to}/ has no layer: add it to LAYERS in tools/check-layers.mjs`;
  const [topFrom, topTo] = [from.split('/')[0], to.split('/')[0]];
  if (topFrom !== topTo && INTEGRATIONS.has(topFrom) && INTEGRATIONS.has(topTo))
    return `integrations stay apart: ${topFrom}/ may not import ${topTo}/`;
  if (b > a) return `an arrow up: ${from}/ (layer ${a}) may not import ${to}/ (layer ${b})`;
  if (b === a) return `${from}/ and ${to}/ are on one layer: neither may import the other`;
  return undefined;
}

function sourceFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Relative imports and re-exports of a source text (static, side-effect and dynamic ones). */
function importsOf(text) {
  const found = [];
  for (const match of text.matchAll(/(?:^|[^\w.])(?:import|export)\s[^;'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]/g))
    found.push(match[1]);
  for (const match of text.matchAll(/(?:^|[^\w.])import\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) found.push(match[1]);
  return found;
}

/** Every import of `libDir` that breaks the rule, as `file: problem (import)`. */
export function findLayerViolations(libDir) {
  const root = resolve(libDir);
  const violations = [];
  for (const path of sourceFiles(root)) {
    const file = relative(root, path).split(sep).join('/');
    for (const specifier of importsOf(readFileSync(path, 'utf8'))) {
      const target = relative(root, resolve(dirname(path), specifier))
        .split(sep)
        .join('/');
      if (target.startsWith('..')) continue; // outside lib (none should be; tsc's rootDir says so)
      const problem = arrowProblem(unitOf(file), unitOf(target));
      if (problem) violations.push(`lib/${file}: ${problem} (import '${specifier}')`);
    }
  }
  return violations;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const libDir = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'lib');
  const violations = findLayerViolations(libDir);
  for (const violation of violations) process.stderr.write(`${violation}\n`);
  if (violations.length > 0) {
    process.stderr.write(`${violations.length} import(s) break the layer rule (tools/check-layers.mjs)\n`);
    process.exit(1);
  }
}
