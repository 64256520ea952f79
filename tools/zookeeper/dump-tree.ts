import type { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';

/** `path [MODE] = value` for every node under `root`, depth first, children in string order. */
export async function dumpTree(registry: ZookeeperRegistryCenter, root: string): Promise<string[]> {
  const lines: string[] = [];
  const visit = async (path: string, depth: number): Promise<void> => {
    const node = await registry.getData(path);
    if (!node) return;
    const mode = node.stat.ephemeralOwner === '0000000000000000' ? 'persistent' : 'ephemeral';
    const value = node.data.toString('utf8');
    const shown = value.includes('\n')
      ? `\n${value
          .trimEnd()
          .split('\n')
          .map((l) => `${'  '.repeat(depth + 2)}${l}`)
          .join('\n')}`
      : value === ''
        ? ''
        : ` = ${value}`;
    lines.push(`${'  '.repeat(depth)}${path.slice(path.lastIndexOf('/') + 1) || '/'} [${mode}]${shown}`);
    const children = (await registry.getChildren(path)) ?? [];
    for (const child of children.sort()) await visit(`${path === '/' ? '' : path}/${child}`, depth + 1);
  };
  await visit(root, 0);
  return lines;
}
