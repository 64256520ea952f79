import type { NodeShape } from '../registry/tree-cache.js';
import { INSTANCE_DELIMITER } from '../elastic-job.constants.js';

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
  readonly systemTimeCurrent: string;
  /** The distribute-once listeners' nodes (ElasticJob's GuaranteeNode): `guarantee/started`, `guarantee/completed`. */
  readonly guarantee: string;
  readonly guaranteeStarted: string;
  readonly guaranteeCompleted: string;
  readonly guaranteeStartedLatch: string;
  readonly guaranteeCompletedLatch: string;
  private readonly skeletonPaths: readonly string[];
  /** Looked up on every cache read: built once. */
  private readonly skeletonSet: ReadonlySet<string>;

  constructor(readonly jobName: string) {
    this.root = `/${jobName}`;
    this.config = `${this.root}/config`;
    this.servers = `${this.root}/servers`;
    this.instances = `${this.root}/instances`;
    this.sharding = `${this.root}/sharding`;
    this.leaderElectionLatch = `${this.root}/leader/election/latch`;
    this.leaderElectionInstance = `${this.root}/leader/election/instance`;
    this.shardingNecessary = `${this.root}/leader/sharding/necessary`;
    this.shardingProcessing = `${this.root}/leader/sharding/processing`;
    this.failoverItems = `${this.root}/leader/failover/items`;
    this.failoverLatch = `${this.root}/leader/failover/latch`;
    this.triggers = `${this.root}/trigger`;
    this.systemTimeCurrent = `${this.root}/systemTime/current`;
    this.guarantee = `${this.root}/guarantee`;
    this.guaranteeStarted = `${this.guarantee}/started`;
    this.guaranteeCompleted = `${this.guarantee}/completed`;
    this.guaranteeStartedLatch = `${this.guarantee}/started-latch`;
    this.guaranteeCompletedLatch = `${this.guarantee}/completed-latch`;
    const leader = `${this.root}/leader`;
    this.skeletonPaths = [
      this.root,
      this.servers,
      this.instances,
      this.sharding,
      leader,
      `${leader}/election`,
      `${leader}/sharding`,
      `${leader}/failover`,
      this.failoverItems,
      this.triggers,
    ];
    this.skeletonSet = new Set(this.skeletonPaths);
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
    // The election latch's participants are listed (so a handover can see whether anyone queues there), not read.
    if (path === this.leaderElectionLatch) return { data: false, children: true };
    if (path.startsWith(`${this.leaderElectionLatch}/`))
      return path.lastIndexOf('/') === this.leaderElectionLatch.length ? { data: false, children: false } : 'ignore';
    if (path === this.failoverLatch || path.startsWith(`${this.failoverLatch}/`)) return 'ignore';
    // Distribute-once listeners: which items started / completed is told by the names under these two.
    if (path.startsWith(`${this.guarantee}/`) && path.slice(this.guarantee.length + 1).includes('-latch'))
      return 'ignore';
    if (path === this.guarantee || path === this.guaranteeStarted || path === this.guaranteeCompleted)
      return { data: false, children: true };
    if (path.startsWith(`${this.guaranteeStarted}/`) || path.startsWith(`${this.guaranteeCompleted}/`))
      return { data: false, children: false };
    if (this.skeletonSet.has(path)) return { data: path === this.root, children: true };
    const rel = path.slice(this.root.length + 1).split('/');
    // sharding/{i} is a directory; everything else below the skeleton is a leaf.
    if (rel.length === 2 && rel[0] === 'sharding') return { data: false, children: true };
    // Running markers come and go with every firing of every instance; whose a peer's marker is matters only
    // when a decision needs it (ExecutionService reads it then), so a firing elsewhere costs us no read.
    if (rel.length === 3 && rel[0] === 'sharding' && rel[2] === 'running') return { data: 'lazy', children: false };
    // Flags whose existence is all they say: announced, never read.
    if (path === this.shardingNecessary || path === this.shardingProcessing) return { data: false, children: false };
    if (rel.length === 3 && rel[0] === 'sharding' && rel[2] === 'misfire') return { data: false, children: false };
    if (rel.length === 2 && (rel[0] === 'trigger' || path.startsWith(`${this.failoverItems}/`)))
      return { data: false, children: false };
    return { data: true, children: false };
  }

  server(ip: string): string {
    return `${this.servers}/${ip}`;
  }

  instance(instanceId: string): string {
    return `${this.instances}/${instanceId}`;
  }

  shardingItem(item: number): string {
    return `${this.sharding}/${item}`;
  }

  shardingInstance(item: number): string {
    return `${this.sharding}/${item}/instance`;
  }

  running(item: number): string {
    return `${this.sharding}/${item}/running`;
  }

  misfire(item: number): string {
    return `${this.sharding}/${item}/misfire`;
  }

  disabled(item: number): string {
    return `${this.sharding}/${item}/disabled`;
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

  /** `servers/{ip}` → ip, for events on server nodes; undefined for other paths. */
  serverIpOf(path: string): string | undefined {
    return path.startsWith(`${this.servers}/`) && !path.slice(this.servers.length + 1).includes('/')
      ? path.slice(this.servers.length + 1)
      : undefined;
  }

  /** `instances/{id}` → id; undefined for other paths. */
  instanceIdOf(path: string): string | undefined {
    return path.startsWith(`${this.instances}/`) && !path.slice(this.instances.length + 1).includes('/')
      ? path.slice(this.instances.length + 1)
      : undefined;
  }
}

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
