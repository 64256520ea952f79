/**
 * ZooKeeper's rules for a node name (one path segment), from its `PathUtils.validatePath`: not empty, not `.` or
 * `..`, no `/`, no NUL or other control characters, nothing from the surrogate and private-use ranges
 * (\ud800-\uf8ff) or \ufff0-\uffff. We also refuse whitespace: such names are legal but no operator types them.
 * Returns what is wrong, or undefined.
 */
export function nodeNameProblem(name: string): string | undefined {
  if (name === '') return 'is empty';
  if (name === '.' || name === '..') return `is a relative path segment ('.' or '..')`;
  if (name.includes('/')) return "contains '/'";
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]/.test(name))
    return 'contains whitespace, a control character or a character ZooKeeper refuses';
  return undefined;
}

/**
 * The longest job name taken, by `@ShardedJob()` and the operator's tools alike: far beyond any real one, far below a
 * request ZooKeeper would refuse, and short enough to quote in an error.
 */
export const MAX_JOB_NAME_LENGTH = 1024;

/** The top-level node ZooKeeper keeps for itself (`/zookeeper`: quotas, config). */
export const RESERVED_ROOT_NODE = 'zookeeper';

export interface ServerAddress {
  host: string;
  port: number;
}

/**
 * Parses a connection string, `host:port[,host:port...][/chroot]`, as node-zookeeper-client reads it. Returns the
 * servers and the chroot ('' when none), or what is wrong.
 */
export function parseServerLists(serverLists: string): { servers: ServerAddress[]; chroot: string } | string {
  const slash = serverLists.indexOf('/');
  const hosts = slash < 0 ? serverLists : serverLists.slice(0, slash);
  // A lone trailing '/' is no chroot, as the client reads it (ConnectionStringParser).
  const chroot = slash < 0 || slash === serverLists.length - 1 ? '' : serverLists.slice(slash);
  const servers: ServerAddress[] = [];
  for (const entry of hosts.split(',')) {
    // No IPv6 literals: the client splits each entry at its first ':'.
    const match = /^([^\s:,/]+):(\d{1,6})$/.exec(entry);
    if (!match) return `'${entry}' is not host:port`;
    const port = Number(match[2]);
    if (port < 1 || port > 65535) return `port ${port} of '${entry}' is outside 1..65535`;
    servers.push({ host: match[1]!, port });
  }
  if (chroot !== '') {
    const segments = chroot.slice(1).split('/');
    for (const segment of segments) {
      const problem = nodeNameProblem(segment);
      if (problem) return `the chroot '${chroot}' is not a ZooKeeper path: a segment ${problem}`;
    }
  }
  return { servers, chroot };
}
