import zookeeper from 'node-zookeeper-client';
import { zkConnect } from './zk.js';

/**
 * The container nodes the library makes: the election latch's parent (lib/job/storage/job-node-storage.ts, as
 * Curator's LeaderLatch makes it). A client cannot tell a container from its stat (the server shows its owner as 0).
 */
const CONTAINER = /\/leader\/election\/latch$/;

/**
 * Every node of a namespace as a line: its path, data (base64), and the stat fields any write changes (data and
 * child versions, the zxids of its last change and of its children's last change). Two snapshots are equal only if
 * nothing was created, deleted or written there in between, not even the same bytes again.
 *
 * Save for ZooKeeper's own housekeeping: the server deletes an empty container node (the election latch's parent)
 * within a minute or so. An empty container is left out, and from then on,
 * in this snapshot and every later one, its parent's child version and zxid are not compared (its children's names
 * still are).
 */
export class TreeSnapshots {
  /** Parents of an empty container seen by any snapshot: the server may delete that child at any time. */
  private readonly reapableParents = new Set<string>();

  private constructor(
    private readonly client: zookeeper.Client,
    private readonly root: string,
  ) {}

  static async open(namespace: string): Promise<TreeSnapshots> {
    const client = zookeeper.createClient(zkConnect(), { sessionTimeout: 10_000 });
    await new Promise<void>((resolve) => {
      client.once('connected', () => resolve());
      client.connect();
    });
    return new TreeSnapshots(client, `/${namespace}`);
  }

  async take(): Promise<string[]> {
    const lines: string[] = [];
    const read = (path: string) =>
      new Promise<[Buffer | undefined, zookeeper.Stat]>((resolve, reject) =>
        this.client.getData(path, (error, value, nodeStat) => (error ? reject(error) : resolve([value, nodeStat]))),
      );
    const children = (path: string) =>
      new Promise<string[]>((resolve, reject) =>
        this.client.getChildren(path, (error, names) => (error ? reject(error) : resolve(names))),
      );
    const visit = async (path: string, [data, stat]: [Buffer | undefined, zookeeper.Stat]): Promise<void> => {
      const line = lines.push('') - 1;
      const kept: Array<[string, [Buffer | undefined, zookeeper.Stat]]> = [];
      for (const child of (await children(path)).sort()) {
        const node = await read(`${path}/${child}`);
        if (node[1].numChildren === 0 && CONTAINER.test(`${path}/${child}`)) this.reapableParents.add(path);
        else kept.push([`${path}/${child}`, node]);
      }
      const reapable = this.reapableParents.has(path);
      lines[line] = [
        path,
        `v${stat.version}`,
        reapable ? 'cv* p*' : `cv${stat.cversion} p${stat.pzxid.toString('hex')}`,
        `m${stat.mzxid.toString('hex')}`,
        `[${kept.map(([child]) => child.slice(path.length + 1)).join(',')}]`,
        (data ?? Buffer.alloc(0)).toString('base64'),
      ].join(' ');
      for (const [child, node] of kept) await visit(child, node);
    };
    await visit(this.root, await read(this.root));
    return lines;
  }

  close(): void {
    this.client.close();
  }
}
