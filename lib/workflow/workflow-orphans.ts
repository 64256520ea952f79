import { parse } from 'yaml';
import { JobNodePath } from '../job/paths.js';
import type { RegistryCenter } from '../registry/registry-center.js';
import type { NodeStat, TransactionOp } from '../registry/registry.types.js';

/** What a run knows of a RUNNING step's start, beside the job's tree (workflow-run.ts, WorkflowStepRun). */
export interface StepReach {
  /** The instances the start reached (a trigger or a rerun); undefined for a run stored before it was kept. */
  given?: readonly string[];
  /** Items handed over already, by item: the instances they were handed to. */
  handedOver?: Readonly<Record<string, readonly string[]>>;
}

/** Items of a step that nobody will run, and the write handing them over. */
export interface Orphans {
  items: number[];
  /** By item: the instances each was handed to. */
  handedTo: Record<string, string[]>;
  /** Gone instances whose pending trigger the write deletes: they no longer count as reached. */
  dropped: string[];
  ops: TransactionOp[];
}

/** The job's tree as one look at it reads it: who is online, who holds a trigger or a rerun, the flags. */
interface JobView {
  job: JobNodePath;
  online: string[];
  live: ReadonlySet<string>;
  triggers: string[];
  /** Live instances holding a trigger: each fires (sharding first when flagged) and runs what it then owns. */
  firing: ReadonlySet<string>;
  /** The resharding flag, when set (its stat: a hand-over that relies on it checks its version). */
  resharding: NodeStat | undefined;
  reruns: Map<string, { items: string[]; version: number }>;
  failover: boolean;
}

/** Who an orphan goes to: every live instance (its firing reshards first), or its live owner alone. */
type Target = 'everyone' | 'owner' | undefined;

/**
 * Items of a RUNNING step that nobody will run, found from the job's tree and what the run recorded of the step's
 * start (StepReach): the coordinator hands them over (`rerun/{id}`) when nothing moves (docs/guide/workflows.md,
 * "Faults"). An item with no outcome is an orphan when, besides having no `running` marker of a live instance (nor
 * of a dead one when failover takes it over), no failover flag or claim, and no pending rerun:
 * - its owner (`sharding/{item}/instance`) is offline and the job flagged for resharding: it left after the start
 *   reached it (or before it could run them), and the next firings deal its items over the live ones;
 * - its owner is live but the start never reached it and it holds no trigger: it came online after the step's
 *   triggers were written and a firing's sharding gave it items (without this, the step stalls);
 * - it has no owner yet and no firing is ahead (no live instance reached by the start, none holding a trigger).
 *   While one is, its sharding writes the owners: handing the items over then would run some twice.
 */
export class WorkflowOrphans {
  constructor(private readonly registry: RegistryCenter) {}

  async find(step: string, items: readonly number[], reach: StepReach): Promise<Orphans | undefined> {
    const view = await this.readView(step);
    if (!view) return undefined;
    const handedTo: Record<string, string[]> = {};
    // The owners read, checked in the hand-over's write: a resharding between this read and the write (a firing
    // under way gives the item to a live instance, which runs it) makes the write fail and the look start again.
    const checks: TransactionOp[] = [];
    let flagged = false;
    for (const item of items) {
      if ([...view.reruns.values()].some((rerun) => rerun.items.includes(String(item)))) continue;
      const node = await this.registry.getData(view.job.shardingInstance(item));
      const owner = node?.data.toString('utf8');
      if (handedToOwner(view, owner, reach.handedOver?.[String(item)])) continue; // one runs it (or has)
      const target = targetOf(view, owner, reach.given);
      if (target === undefined || (await this.runningOrTakenOver(view, item))) continue;
      handedTo[String(item)] = target === 'owner' ? [owner!] : view.online;
      if (node) checks.push({ op: 'check', path: view.job.shardingInstance(item), version: node.stat.version });
      if (target === 'everyone') flagged = true;
    }
    const orphans = Object.keys(handedTo).map(Number);
    if (orphans.length === 0) return undefined;
    // An owner's node is deleted and created again by each resharding (sharding.service.ts), so its version alone
    // does not tell that one came between (version 0 before and after). A hand-over to everyone rests on the flag:
    // the resharding that removes it deals the items to a firing under way, which runs them (workflow-faults.spec
    // saw one run twice when only the owner's version was checked).
    if (flagged) checks.push({ op: 'check', path: view.job.shardingNecessary, version: view.resharding?.version });
    await this.registry.ensurePath(view.job.reruns);
    const dropped = view.triggers.filter((id) => !view.live.has(id));
    return { items: orphans, handedTo, dropped, ops: [...checks, ...handOverOps(view, handedTo)] };
  }

  private async readView(step: string): Promise<JobView | undefined> {
    const job = new JobNodePath(step);
    const online = ((await this.registry.getChildren(job.instances)) ?? []).sort();
    if (online.length === 0) return undefined;
    const live = new Set(online);
    const [triggers, resharding, failover] = await Promise.all([
      this.registry.getChildren(job.triggers).then((ids) => ids ?? []),
      this.registry.exists(job.shardingNecessary),
      this.readFailover(job),
    ]);
    const reruns = new Map<string, { items: string[]; version: number }>();
    for (const id of online) {
      const node = await this.registry.getData(job.rerun(id));
      if (node) reruns.set(id, { items: node.data.toString('utf8').split(','), version: node.stat.version });
    }
    const firing = new Set(triggers.filter((id) => live.has(id)));
    return { job, online, live, triggers, firing, resharding, reruns, failover };
  }

  /** A `running` marker of a live instance (or of a dead one, failover taking it over), or failover's own nodes. */
  private async runningOrTakenOver(view: JobView, item: number): Promise<boolean> {
    const marker = (await this.registry.getData(view.job.running(item)))?.data.toString('utf8');
    if (marker !== undefined && (view.live.has(marker) || view.failover)) return true;
    const [flagged, claimed] = await Promise.all([
      this.registry.exists(view.job.failoverItem(item)),
      this.registry.exists(view.job.failover(item)),
    ]);
    return Boolean(flagged) || Boolean(claimed);
  }

  /** Whether the job's config says `failover: true` (its crashed items' `running` markers stay for a taker). */
  private async readFailover(job: JobNodePath): Promise<boolean> {
    const node = await this.registry.getData(job.config);
    try {
      return node !== undefined && (parse(node.data.toString('utf8')) as { failover?: unknown }).failover === true;
    } catch {
      return false;
    }
  }
}

/**
 * Whether an earlier hand-over of the item still stands: a live target runs it if it owns it, and a firing (the
 * targets' reruns reshard first when flagged) deals the item to one of them. Not when a resharding since gave it to a
 * live instance that was not among them (one back on a new session, or a late joiner): the targets each ran only
 * what they owned, so nobody runs it (a CI run saw a step stall this way).
 */
function handedToOwner(view: JobView, owner: string | undefined, handed: readonly string[] | undefined): boolean {
  if (!handed?.some((id) => view.live.has(id))) return false;
  return owner === undefined || !view.live.has(owner) || handed.includes(owner);
}

/** Whether an item whose owner is this (undefined: none yet) is an orphan, and who it goes to. */
function targetOf(view: JobView, owner: string | undefined, given: readonly string[] | undefined): Target {
  if (owner === undefined) {
    // A firing ahead (reached by the start, or holding a trigger) shards and writes the owners.
    const ahead = view.firing.size > 0 || (given ?? []).some((id) => view.live.has(id));
    return view.resharding && !ahead ? 'everyone' : undefined;
  }
  if (!view.live.has(owner)) return view.resharding ? 'everyone' : undefined; // until flagged, still its own
  // A live owner the start reached, or about to fire, runs it; a run stored without `given` trusts every live owner.
  if (given === undefined || given.includes(owner) || view.firing.has(owner)) return undefined;
  // Flagged again, the next firing may deal it elsewhere: every live instance then runs those it owns.
  return view.resharding ? 'everyone' : 'owner';
}

/**
 * A gone instance's trigger goes (back with its id, it must not run them too); a live one's pending trigger fires
 * after the resharding flag, so it runs whichever it then owns: no rerun beside it (checked, so that one consumed
 * meanwhile makes the write fail and the look start again). Every other target gets its items in `rerun/{id}`.
 */
function handOverOps(view: JobView, handedTo: Readonly<Record<string, readonly string[]>>): TransactionOp[] {
  const { job } = view;
  const ops: TransactionOp[] = view.triggers.map((id): TransactionOp =>
    view.live.has(id) ? { op: 'check', path: job.trigger(id) } : { op: 'remove', path: job.trigger(id) },
  );
  const byTarget = new Map<string, string[]>();
  for (const [item, targets] of Object.entries(handedTo))
    for (const id of targets) if (!view.firing.has(id)) byTarget.set(id, [...(byTarget.get(id) ?? []), item]);
  for (const [id, items] of byTarget) {
    const held = view.reruns.get(id);
    const data = Buffer.from([...new Set([...(held?.items ?? []), ...items])].join(','), 'utf8');
    ops.push(
      held
        ? { op: 'setData', path: job.rerun(id), data, version: held.version }
        : { op: 'create', path: job.rerun(id), data, mode: 'PERSISTENT' },
    );
  }
  return ops;
}
