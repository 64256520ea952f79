import type { NodeShape } from './tree-cache.js';

/** A node as read or as known from our own write; undefined: it is not there. */
export type Observed = { data: Buffer; version: number; mzxid: bigint } | undefined;

/** The data of a node whose data is not read (a directory), as an answer would carry it. */
export const EMPTY = Buffer.alloc(0);

/** A node of a TreeCache's full read (at start, and after a reconnection). */
export interface SnapshotNode {
  node: NonNullable<Observed>;
  children: string[];
  /** A lazy node: known to exist, its data left unread (as when an event announces it). */
  unread?: true;
}

/** What the full read asks of the cache that runs it (its reads are bounded there). */
export interface SubtreeSource {
  shape(path: string): NodeShape;
  read(path: string): Promise<Observed>;
  exists(path: string): Promise<boolean>;
  /** Undefined when the node is gone. */
  children(path: string): Promise<string[] | undefined>;
  /** Whether the cache holds the node's data already (a lazy node it has read, or one of our own writes). */
  holdsData(path: string): boolean;
}

/** Reads the subtree as it is now (no watches: the cache's recursive watch covers it). */
export async function readSubtree(root: string, source: SubtreeSource): Promise<Map<string, SnapshotNode>> {
  const snapshot = new Map<string, SnapshotNode>();
  const visit = async (path: string): Promise<void> => {
    const shape = source.shape(path);
    if (shape === 'ignore') return;
    // A node whose data we do not read is known to exist from its parent's listing (the root aside), and
    // from its own listing when it has children to list: no read for its existence alone.
    const empty = { data: EMPTY, version: 0, mzxid: 0n };
    // A lazy node is left unread unless the cache holds its data already (read, or our own write): that stays true.
    const lazy = shape.data === 'lazy' && !source.holdsData(path);
    // Data and children asked for together, the root's too: the cache reads through readMany, so both share one
    // multiRead request (a new job's missing tree, a thousand at a first start, is found missing in one request).
    const [node, children] = await Promise.all([
      shape.data && !lazy
        ? source.read(path)
        : path !== root || shape.children
          ? Promise.resolve(empty)
          : source.exists(path).then((exists) => (exists ? empty : undefined)),
      shape.children ? source.children(path) : Promise.resolve([] as string[]),
    ]);
    // Gone meanwhile (either read says so): its deletion event follows.
    if (!node || children === undefined) return;
    snapshot.set(path, {
      node: shape.data && !lazy ? node : { data: EMPTY, version: 0, mzxid: node.mzxid },
      children,
      ...(lazy ? { unread: true as const } : {}),
    });
    await Promise.all(children.map((child) => visit(`${path}/${child}`)));
  };
  await visit(root);
  return snapshot;
}
