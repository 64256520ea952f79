/**
 * What a TreeCache keeps of one node (registry/tree-cache.ts): a few dozen of these a job, so each field is kept as
 * small as it can be (issue 32's memory per job, docs/benchmarks.md).
 */
export interface CachedNode {
  /**
   * As UTF-8 text (what every reader asks for): a string costs its characters, a Buffer ~100 bytes more and pins an
   * 8 KB pool slab with it. undefined: a lazy node not read yet.
   */
  data: string | undefined;
  version: number;
  /** 0n when the node came from our own create (its zxid is not in the answer): any read supersedes it. */
  mzxid: bigint;
  /**
   * Made when the first child is cached: most nodes are leaves. An array (of exactly its names while short): a
   * directory has a child or a few, and a Set is 150 bytes before its first one.
   */
  children: Children | undefined;
}

/**
 * A node's children: an array of exactly their names while they are few (a directory has a child or a few, and a Set
 * is 150 bytes before its first one), a Set from SET_FROM on (a job's `sharding/` may have 10,000 items: adding and
 * removing in an array would be quadratic).
 */
export type Children = string[] | Set<string>;
const SET_FROM = 16;

export function withChild(children: Children | undefined, name: string): Children {
  if (!children) return [name];
  if (children instanceof Set) return children.add(name);
  if (children.includes(name)) return children;
  return children.length + 1 >= SET_FROM ? new Set(children).add(name) : children.concat(name);
}

/** undefined when none is left. */
export function withoutChild(children: Children, name: string): Children | undefined {
  if (children instanceof Set) {
    children.delete(name);
    return children.size === 0 ? undefined : children;
  }
  const left = children.filter((child) => child !== name);
  return left.length === 0 ? undefined : left;
}
