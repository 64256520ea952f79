import type { NodeShape } from '../registry/tree-cache.js';
import { intern } from '../util/intern.js';

/** ElasticJob's delimiter in instance ids and task ids. */
export const INSTANCE_DELIMITER = '@-@';

/** The shapes cacheShape answers with, shared by every job (the cache only reads them). */
const DIRECTORY: NodeShape = Object.freeze({ data: false, children: true });
const ANNOUNCED: NodeShape = Object.freeze({ data: false, children: false });
const LEAF: NodeShape = Object.freeze({ data: true, children: false });
const LAZY_LEAF: NodeShape = Object.freeze({ data: 'lazy', children: false });
const ROOT_SHAPE: NodeShape = Object.freeze({ data: true, children: true });

/** `path` is strictly below `dir` (`dir/...`). */
function isUnder(path: string, dir: string): boolean {
  return path.length > dir.length + 1 && path.charCodeAt(dir.length) === 47 && path.startsWith(dir);
}

/**
 * Every ZooKeeper path of one job, namespace-relative (`/{jobName}/...`), ElasticJob-Lite 3.x layout (docs/SPEC.md §2).
 * The one place that knows the layout.
 */
export class JobNodePath {
  readonly root: string;
  readonly config: string;
  readonly servers: string;
  readonly instances: string;
  readonly sharding: string;
  readonly leaderElectionLatch: string;
  readonly leaderElectionInstance: string;
  readonly shardingNecessary: string;
  readonly shardingProcessing: string;
  readonly failoverItems: string;
  readonly failoverLatch: string;
  readonly triggers: string;
  /**
   * This library's rerun requests, `rerun/{instanceId}` holding items (`2,5`): run those items again now on that
   * instance (docs/design/zookeeper-tree.md). Java instances have no listener on it and leave it alone.
   */
  readonly reruns: string;
  /**
   * This library's execution-history queries (docs/guide/console.md, "Execution history without a database"):
   * `executions/query-{id}` asks the instances it names for their in-memory logs, each answering beside it in
   * `executions/reply-{id}~{instanceId}`. Java instances have no listener on it.
   */
  readonly executions: string;
  readonly systemTimeCurrent: string;
  /** The distribute-once listeners' nodes (ElasticJob's GuaranteeNode): `guarantee/started`, `guarantee/completed`. */
  readonly guarantee: string;
  readonly guaranteeStarted: string;
  readonly guaranteeCompleted: string;
  readonly guaranteeStartedLatch: string;
  readonly guaranteeCompletedLatch: string;
  private readonly skeletonPaths: readonly string[];
  /** itemPath()'s memo, made when first asked. */
  private itemPaths: string[] | undefined;
  /** The last server and instance path asked for (this instance's own, nearly always). */
  private lastServer: { ip: string; path: string } | undefined;
  private lastInstance: { id: string; path: string } | undefined;

  constructor(readonly jobName: string) {
    this.root = intern(`/${jobName}`);
    this.config = intern(`${this.root}/config`);
    this.servers = intern(`${this.root}/servers`);
    this.instances = intern(`${this.root}/instances`);
    this.sharding = intern(`${this.root}/sharding`);
    this.leaderElectionLatch = intern(`${this.root}/leader/election/latch`);
    this.leaderElectionInstance = intern(`${this.root}/leader/election/instance`);
    this.shardingNecessary = intern(`${this.root}/leader/sharding/necessary`);
    this.shardingProcessing = intern(`${this.root}/leader/sharding/processing`);
    this.failoverItems = intern(`${this.root}/leader/failover/items`);
    this.failoverLatch = intern(`${this.root}/leader/failover/latch`);
    this.triggers = intern(`${this.root}/trigger`);
    this.reruns = intern(`${this.root}/rerun`);
    this.executions = intern(`${this.root}/executions`);
    this.systemTimeCurrent = intern(`${this.root}/systemTime/current`);
    this.guarantee = intern(`${this.root}/guarantee`);
    this.guaranteeStarted = intern(`${this.guarantee}/started`);
    this.guaranteeCompleted = intern(`${this.guarantee}/completed`);
    this.guaranteeStartedLatch = intern(`${this.guarantee}/started-latch`);
    this.guaranteeCompletedLatch = intern(`${this.guarantee}/completed-latch`);
    const leader = intern(`${this.root}/leader`);
    this.skeletonPaths = [
      this.root,
      this.servers,
      this.instances,
      this.sharding,
      leader,
      intern(`${leader}/election`),
      intern(`${leader}/sharding`),
      intern(`${leader}/failover`),
      this.failoverItems,
      this.triggers,
    ];
  }

  /**
   * The persistent directories of a job, parents first: created in one transaction at set-up, so that later
   * writes never walk a missing path one node at a time. Not the latch directories: those are containers, made
   * when a latch is first entered and reaped by the server once empty, as Curator (and so Java ElasticJob) does.
   */
  skeleton(): readonly string[] {
    return this.skeletonPaths;
  }

  /**
   * What the job's cache reads of a node: leaves need their data only, directories their children only, and
   * latch participants listed but never read (the latch reads them itself). Saves ZooKeeper reads.
   */
  cacheShape(path: string): NodeShape {
    // Called for every node of every event of every job: no allocation (shapes are shared, no split or template).
    // The election latch's participants are listed (so a handover can see whether anyone queues there), not read.
    if (path === this.leaderElectionLatch) return DIRECTORY;
    if (isUnder(path, this.leaderElectionLatch))
      return path.lastIndexOf('/') === this.leaderElectionLatch.length ? ANNOUNCED : 'ignore';
    if (path === this.failoverLatch || isUnder(path, this.failoverLatch)) return 'ignore';
    // Distribute-once listeners: which items started / completed is told by the names under these two.
    if (isUnder(path, this.guarantee) && path.indexOf('-latch', this.guarantee.length + 1) !== -1) return 'ignore';
    if (path === this.guarantee || path === this.guaranteeStarted || path === this.guaranteeCompleted) return DIRECTORY;
    if (isUnder(path, this.guaranteeStarted) || isUnder(path, this.guaranteeCompleted)) return ANNOUNCED;
    // Ten strings compared (by length first): a Set of them was ~400 bytes a job.
    if (this.skeletonPaths.includes(path)) return path === this.root ? ROOT_SHAPE : DIRECTORY;
    if (path === this.reruns || path === this.executions) return DIRECTORY;
    // A query is announced to every instance of the job (the named ones read it); replies are the asker's to read.
    if (isUnder(path, this.executions))
      return path.startsWith('query-', this.executions.length + 1) ? ANNOUNCED : 'ignore';
    // Below the root: `first/second[/third]`, by the positions of the slashes.
    const from = this.root.length + 1;
    const second = path.indexOf('/', from) + 1;
    const third = second === 0 ? 0 : path.indexOf('/', second) + 1;
    const depth = second === 0 ? 1 : third === 0 ? 2 : path.indexOf('/', third) === -1 ? 3 : 4;
    const inSharding = second - 1 - from === 8 && path.startsWith('sharding', from);
    // sharding/{i} is a directory; everything else below the skeleton is a leaf.
    if (depth === 2 && inSharding) return DIRECTORY;
    if (depth === 3 && inSharding) {
      const leaf = path.slice(third);
      // Running markers come and go with every firing of every instance; whose a peer's marker is matters only
      // when a decision needs it (ExecutionService reads it then), so a firing elsewhere costs us no read.
      if (leaf === 'running') return LAZY_LEAF;
      if (leaf === 'misfire') return ANNOUNCED;
    }
    // A live instance's node says its server: only the one sharding (or taking crashed items over) needs that, so
    // peers joining cost the others no read (InstanceService.readInstances).
    if (depth === 2 && second - 1 - from === 9 && path.startsWith('instances', from)) return LAZY_LEAF;
    // Flags whose existence is all they say: announced, never read.
    if (path === this.shardingNecessary || path === this.shardingProcessing) return ANNOUNCED;
    if (depth === 2 && (isUnder(path, this.triggers) || isUnder(path, this.failoverItems))) return ANNOUNCED;
    if (depth === 2 && isUnder(path, this.reruns)) return ANNOUNCED;
    return LEAF;
  }

  server(ip: string): string {
    if (ip !== this.lastServer?.ip) this.lastServer = { ip, path: `${this.servers}/${ip}` };
    return this.lastServer.path;
  }

  instance(instanceId: string): string {
    if (instanceId !== this.lastInstance?.id)
      this.lastInstance = { id: instanceId, path: `${this.instances}/${instanceId}` };
    return this.lastInstance.path;
  }

  shardingItem(item: number): string {
    return `${this.sharding}/${item}`;
  }

  shardingInstance(item: number): string {
    return this.itemPath(item, INSTANCE);
  }

  running(item: number): string {
    return this.itemPath(item, RUNNING);
  }

  misfire(item: number): string {
    return this.itemPath(item, MISFIRE);
  }

  disabled(item: number): string {
    return this.itemPath(item, DISABLED);
  }

  /**
   * `sharding/{item}/{kind}`, the paths every firing asks about for each of its items (a dozen lookups an item), made
   * once per job and item for the first MEMO_ITEMS items: internalized, so the cache's key of the same node is the
   * same string.
   */
  private itemPath(item: number, kind: number): string {
    if (item >= MEMO_ITEMS || !Number.isInteger(item) || item < 0)
      return `${this.sharding}/${item}/${ITEM_NODES[kind]}`;
    const memo = (this.itemPaths ??= []);
    return (memo[item * ITEM_NODES.length + kind] ??= intern(`${this.sharding}/${item}/${ITEM_NODES[kind]}`));
  }

  failover(item: number): string {
    return `${this.sharding}/${item}/failover`;
  }

  failovering(item: number): string {
    return `${this.sharding}/${item}/failovering`;
  }

  failoverItem(item: number): string {
    return `${this.failoverItems}/${item}`;
  }

  /** `guarantee/started/{item}` or `guarantee/completed/{item}`. */
  guaranteeItem(kind: 'started' | 'completed', item: number): string {
    return `${kind === 'started' ? this.guaranteeStarted : this.guaranteeCompleted}/${item}`;
  }

  trigger(instanceId: string): string {
    return `${this.triggers}/${instanceId}`;
  }

  rerun(instanceId: string): string {
    return `${this.reruns}/${instanceId}`;
  }

  executionQuery(queryId: string): string {
    return `${this.executions}/query-${queryId}`;
  }

  executionReply(queryId: string, instanceId: string): string {
    return `${this.executions}/reply-${queryId}~${instanceId}`;
  }

  /** `executions/query-{id}` → id; undefined for other paths. */
  executionQueryIdOf(path: string): string | undefined {
    const prefix = `${this.executions}/query-`;
    return path.startsWith(prefix) && !path.includes('/', prefix.length) ? path.slice(prefix.length) : undefined;
  }

  /** `servers/{ip}` → ip, for events on server nodes; undefined for other paths. */
  serverIpOf(path: string): string | undefined {
    return childName(path, this.servers);
  }

  /** `instances/{id}` → id; undefined for other paths. */
  instanceIdOf(path: string): string | undefined {
    return childName(path, this.instances);
  }
}

/**
 * `{parent}/{name}` → name; undefined for other paths. Asked of every event in a job's tree (a burst's running
 * markers among them): decided without building a string unless it is a child.
 */
function childName(path: string, parent: string): string | undefined {
  const from = parent.length + 1;
  if (path.length < from || path.charCodeAt(parent.length) !== SLASH || !path.startsWith(parent)) return undefined;
  return path.indexOf('/', from) < 0 ? path.slice(from) : undefined;
}

const SLASH = 47;

/** The nodes below `sharding/{item}` a firing reads, by itemPath()'s kind. */
const ITEM_NODES = ['instance', 'running', 'misfire', 'disabled'] as const;
const INSTANCE = 0;
const RUNNING = 1;
const MISFIRE = 2;
const DISABLED = 3;
/** Items whose paths are kept (a job of ten thousand items keeps those of its first 64). */
const MEMO_ITEMS = 64;

/** Sharding items 0 to total - 1. */
export function everyItem(total: number): number[] {
  return Array.from({ length: total }, (_, item) => item);
}

/** ElasticJob's task id: `{jobName}@-@{items}@-@READY@-@{instanceId}` (deterministic, not unique per firing). */
export function buildTaskId(jobName: string, items: readonly number[] | string, instanceId: string): string {
  return [jobName, typeof items === 'string' ? items : items.join(','), 'READY', instanceId].join(INSTANCE_DELIMITER);
}

/** `{ip}@-@{pid}` */
export function buildInstanceId(ip: string, pid: number): string {
  return `${ip}${INSTANCE_DELIMITER}${pid}`;
}

/** The server IP of an instance id: the exact part before `@-@` (never a prefix match, EJ #2226). */
export function serverIpOfInstance(instanceId: string): string {
  const index = instanceId.indexOf(INSTANCE_DELIMITER);
  return index < 0 ? instanceId : instanceId.slice(0, index);
}
