/** Connection states, Curator's model (docs/reference/zookeeper.md §1.5, §3.5). */
export type ConnectionState = 'CONNECTED' | 'SUSPENDED' | 'RECONNECTED' | 'LOST';

export interface ConnectionStateChange {
  state: ConnectionState;
  /** For RECONNECTED: true when the session is a new one (the old one expired or was declared lost). */
  newSession: boolean;
}

export type NodeMode = 'PERSISTENT' | 'EPHEMERAL' | 'PERSISTENT_SEQUENTIAL' | 'EPHEMERAL_SEQUENTIAL';

export interface NodeStat {
  version: number;
  cversion: number;
  numChildren: number;
  /** Session id (16 hex digits) of the owner for ephemeral nodes, '0000000000000000' otherwise. */
  ephemeralOwner: string;
  /** Last modification time, ms since epoch (server clock). */
  mtime: number;
  /** Zxid of the last change: orders two reads of the same node. */
  mzxid: bigint;
}

export interface NodeData {
  data: Buffer;
  stat: NodeStat;
}

export type WatchEventType = 'NODE_CREATED' | 'NODE_DELETED' | 'NODE_DATA_CHANGED' | 'NODE_CHILDREN_CHANGED';

export interface WatchEvent {
  type: WatchEventType;
  /** Namespace-relative path. */
  path: string;
}

/** Keep the same function object per (path, kind): the client de-duplicates watchers by identity. */
export type Watcher = (event: WatchEvent) => void;

/** `version`: the node's data version the op requires (BAD_VERSION otherwise); absent: any version. */
export type TransactionOp =
  | { op: 'create'; path: string; data: Buffer; mode: NodeMode }
  | { op: 'setData'; path: string; data: Buffer; version?: number }
  | { op: 'remove'; path: string; version?: number }
  | { op: 'check'; path: string; version?: number };

/** One read of a `readMany`: a node's data and stat, or its children's names. */
export interface ReadRequest {
  path: string;
  what: 'data' | 'children';
}

/** A `readMany` answer: NodeData for 'data', the names (unsorted) for 'children', undefined when there is no node. */
export type ReadAnswer = NodeData | string[] | undefined;
