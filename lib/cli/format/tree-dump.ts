import type { RegistryReads } from '../../registry/registry-center.js';
import type { NodeData } from '../../registry/registry.types.js';

/** One node of a dump: its namespace-relative path and its value as UTF-8 text. */
export interface DumpedNode {
  path: string;
  value: string;
}

/**
 * Every node under `root` with its value, depth first, parents before children, as ElasticJob's dump lists a job
 * (`path | value`, paths relative to the namespace). `root` itself is listed unless it is the namespace (`/`),
 * which holds nothing. Children come in name order, item numbers numerically (`sharding/2` before `sharding/10`),
 * so that two dumps compare line by line. A node deleted while the walk runs (an ephemeral) is left out.
 */
export async function dumpTree(registry: RegistryReads, root: string): Promise<DumpedNode[]> {
  const visit = async (path: string, listed: boolean): Promise<DumpedNode[]> => {
    // Through readMany: the reads of a level share multiRead requests (a namespace of a thousand jobs is tens of
    // thousands of nodes).
    const answers = await registry.readMany(
      listed
        ? [
            { path, what: 'data' },
            { path, what: 'children' },
          ]
        : [{ path, what: 'children' }],
    );
    const node = listed ? (answers[0] as NodeData | undefined) : undefined;
    const children = answers[listed ? 1 : 0] as string[] | undefined;
    if (listed && node === undefined) return [];
    const below = await Promise.all(
      (children ?? []).sort(byName).map((child) => visit(`${path === '/' ? '' : path}/${child}`, true)),
    );
    const self = listed && node !== undefined ? [{ path, value: node.data.toString('utf8') }] : [];
    return [...self, ...below.flat()];
  };
  return visit(root, root !== '/');
}

function byName(a: string, b: string): number {
  if (/^\d+$/.test(a) && /^\d+$/.test(b) && a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `path | value`, one line per node: line breaks in a value (the YAML config) are written `\n`. */
export function formatDump(nodes: readonly DumpedNode[]): string {
  return nodes
    .map(({ path, value }) => `${path} |${value === '' ? '' : ` ${value.replace(/\r?\n/g, '\\n')}`}\n`)
    .join('');
}
