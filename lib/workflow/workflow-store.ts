import { parse } from 'yaml';
import { InvalidOperationError, registryErrorCode } from '../errors/elastic-job.errors.js';
import type { WorkflowOptions } from '../interfaces/workflow-options.interface.js';
import { JobNodePath } from '../job/paths.js';
import { mapBounded } from '../registry/request-limits.js';
import type { RegistryCenter } from '../registry/registry-center.js';
import type { TransactionOp } from '../registry/registry.types.js';
import { WorkflowNodePath } from './workflow-paths.js';
import { newRun, parseOutcome, parseRun, type ItemOutcome, type WorkflowRun } from './workflow-run.js';

const EMPTY = Buffer.alloc(0);

/** A run as read, with its node's version: every write of it is conditional on that version. */
export interface StoredRun {
  run: WorkflowRun;
  version: number;
}

/**
 * The reads and writes of one workflow's nodes (workflow-paths.ts) over the RegistryCenter, shared by its
 * coordinator, the instances recording their items, and the operator API. Every change of a run is one transaction
 * conditional on the version read, so two writers (a coordinator that lost its session, the next one, an operator)
 * can never both apply a move: the loser reads again and finds it done.
 */
export class WorkflowStore {
  readonly paths: WorkflowNodePath;

  constructor(
    private readonly registry: RegistryCenter,
    readonly workflow: string,
    /** Garbage found in the tree: logged naming the node, never adopted. */
    private readonly warn: (message: string) => void = () => undefined,
  ) {
    this.paths = new WorkflowNodePath(workflow);
  }

  /** The workflow as its instances stored it; undefined when no instance of it ever started. */
  async readDefinition(): Promise<WorkflowOptions | undefined> {
    const node = await this.registry.getData(this.paths.root);
    if (!node || node.data.length === 0) return undefined;
    try {
      const value = JSON.parse(node.data.toString('utf8')) as WorkflowOptions;
      if (typeof value === 'object' && value !== null && typeof value.steps === 'object') return value;
    } catch {
      // refused below
    }
    this.warn(`${this.paths.root} does not hold a workflow definition (JSON): ignored`);
    return undefined;
  }

  /** Writes the workflow's definition (at an instance's start), with its directories. */
  async writeDefinition(workflow: WorkflowOptions): Promise<void> {
    await this.registry.persist(this.paths.root, Buffer.from(JSON.stringify(workflow), 'utf8'));
    await this.registry.ensurePath(this.paths.runs);
  }

  /** The id of the run under way, and the version of the node saying it. */
  async readActive(): Promise<{ runId: string; version: number } | undefined> {
    const node = await this.registry.getData(this.paths.active);
    return node && { runId: node.data.toString('utf8'), version: node.stat.version };
  }

  async readRun(runId: string): Promise<StoredRun | undefined> {
    const node = await this.registry.getData(this.paths.run(runId));
    if (!node) return undefined;
    const run = parseRun(node.data.toString('utf8'));
    if (!run) {
      this.warn(`${this.paths.run(runId)} does not hold a workflow run: ignored`);
      return undefined;
    }
    return { run, version: node.stat.version };
  }

  /** Every run kept, oldest first (ids sort as runs were made). */
  async runIds(): Promise<string[]> {
    return ((await this.registry.getChildren(this.paths.runs)) ?? []).sort();
  }

  /** The item outcomes recorded for these steps of the run. */
  async readOutcomes(runId: string, steps: readonly string[]): Promise<Map<string, Map<number, ItemOutcome>>> {
    const result = new Map<string, Map<number, ItemOutcome>>();
    await mapBounded(steps, async (step) => {
      const dir = this.paths.stepItems(runId, step);
      const names = (await this.registry.getChildren(dir)) ?? [];
      const outcomes = new Map<number, ItemOutcome>();
      await mapBounded(names, async (name) => {
        const node = await this.registry.getData(`${dir}/${name}`);
        if (!node) return;
        const outcome = parseOutcome(node.data.toString('utf8'));
        if (outcome && /^\d+$/.test(name)) outcomes.set(Number(name), outcome);
        else this.warn(`${dir}/${name} is not an item outcome: ignored`);
      });
      result.set(step, outcomes);
    });
    return result;
  }

  /** A job's item count, from its config node (as ElasticJob stores it); undefined when it cannot be read. */
  async readTotal(jobName: string): Promise<number | undefined> {
    const node = await this.registry.getData(new JobNodePath(jobName).config);
    if (!node) return undefined;
    try {
      const total = (parse(node.data.toString('utf8')) as { shardingTotalCount?: unknown }).shardingTotalCount;
      return typeof total === 'number' && Number.isInteger(total) && total > 0 ? total : undefined;
    } catch {
      return undefined;
    }
  }

  /** Whether the job has an instance online (`instances/` has a child). */
  async hasInstances(jobName: string): Promise<boolean> {
    return ((await this.registry.getChildren(new JobNodePath(jobName).instances)) ?? []).length > 0;
  }

  /**
   * A new run, every step PENDING, and the `active` node naming it, in one transaction: while another run is active
   * the create of `active` fails and the run is refused (InvalidOperationError naming the active run).
   */
  async createRun(
    workflow: WorkflowOptions,
    runId: string,
    trigger: WorkflowRun['trigger'],
    now: Date,
  ): Promise<WorkflowRun> {
    const run = newRun(workflow, runId, trigger, now);
    await this.registry.ensurePath(this.paths.runs);
    try {
      await this.registry.transaction([
        { op: 'create', path: this.paths.active, data: Buffer.from(runId, 'utf8'), mode: 'PERSISTENT' },
        { op: 'create', path: this.paths.run(runId), data: json(run), mode: 'PERSISTENT' },
      ]);
    } catch (error) {
      if (registryErrorCode(error) !== 'NODE_EXISTS') throw error;
      const active = await this.readActive();
      throw new InvalidOperationError(
        'triggerWorkflow',
        'name',
        active
          ? `workflow '${this.workflow}' has run ${active.runId} under way: one run at a time; wait for it or cancel it`
          : `run ${runId} of workflow '${this.workflow}' exists already`,
      );
    }
    return run;
  }

  /**
   * Writes the run at the version read, with `ops` in the same transaction; `active` goes when the run has ended,
   * comes back when a re-run brings a FAILED run back. Throws the RegistryError of a lost race (BAD_VERSION,
   * NODE_EXISTS, NO_NODE): the caller reads again.
   */
  async writeRun(
    stored: StoredRun,
    run: WorkflowRun,
    ops: readonly TransactionOp[] = [],
    active?: { runId: string; version: number },
  ): Promise<void> {
    const write: TransactionOp[] = [
      { op: 'setData', path: this.paths.run(run.id), data: json(run), version: stored.version },
      ...ops,
    ];
    const ended = run.state !== 'RUNNING';
    if (ended && active?.runId === run.id)
      write.push({ op: 'remove', path: this.paths.active, version: active.version });
    if (!ended && stored.run.state !== 'RUNNING')
      write.push({ op: 'create', path: this.paths.active, data: Buffer.from(run.id, 'utf8'), mode: 'PERSISTENT' });
    await this.registry.transaction(write);
  }

  /**
   * The ops that start a step of a run: its outcomes' directory, then a trigger for every online instance of the job
   * (all items: ElasticJob's `trigger/{instanceId}`, as InstanceService.triggerAllInstances writes it) or, for a
   * re-run of some items, this library's `rerun/{owner}` for each item's owner. Items without a live owner fall back
   * to triggering every instance (the job's leader shards at that firing). `given`: the instances the start reaches
   * (workflow-orphans.ts tells from it a late joiner's items, which no trigger reached).
   */
  async startOps(
    runId: string,
    step: string,
    items: readonly number[],
    total: number,
  ): Promise<{ ops: TransactionOp[]; given: string[] }> {
    const job = new JobNodePath(step);
    const ops: TransactionOp[] = [];
    const dir = this.paths.stepItems(runId, step);
    // Read together (one round trip, not three in a row): they are on the path from a parent's end to its child.
    const [there, online, triggers] = await Promise.all([
      this.registry.exists(dir),
      this.registry.getChildren(job.instances),
      this.registry.getChildren(job.triggers),
    ]);
    if (!there) ops.push({ op: 'create', path: dir, data: EMPTY, mode: 'PERSISTENT' });
    const instances = (online ?? []).sort();
    const live = new Set(instances);
    if (items.length < total) {
      const byOwner = new Map<string, number[]>();
      for (const item of items) {
        const owner = (await this.registry.getData(job.shardingInstance(item)))?.data.toString('utf8') ?? '';
        if (!live.has(owner) || (await this.registry.exists(job.disabled(item))))
          return { ops: [...ops, ...this.triggerOps(job, instances, triggers ?? [])], given: instances };
        byOwner.set(owner, [...(byOwner.get(owner) ?? []), item]);
      }
      await this.registry.ensurePath(job.reruns);
      for (const [owner, owned] of byOwner) {
        const pending = await this.registry.getData(job.rerun(owner));
        const all = [
          ...new Set([...(pending?.data.toString('utf8').split(',').filter(Boolean) ?? []), ...owned.map(String)]),
        ];
        ops.push(
          pending
            ? {
                op: 'setData',
                path: job.rerun(owner),
                data: Buffer.from(all.join(','), 'utf8'),
                version: pending.stat.version,
              }
            : { op: 'create', path: job.rerun(owner), data: Buffer.from(all.join(','), 'utf8'), mode: 'PERSISTENT' },
        );
      }
      return { ops, given: [...byOwner.keys()].sort() };
    }
    return { ops: [...ops, ...this.triggerOps(job, instances, triggers ?? [])], given: instances };
  }

  /** `trigger/` emptied and one `trigger/{instanceId}` per online instance (trigger-all-instances.ts, in one write). */
  private triggerOps(job: JobNodePath, instances: readonly string[], left: readonly string[]): TransactionOp[] {
    return [
      { op: 'check', path: job.config },
      ...left.map((id): TransactionOp => ({ op: 'remove', path: job.trigger(id) })),
      ...instances.map((id): TransactionOp => ({
        op: 'create',
        path: job.trigger(id),
        data: EMPTY,
        mode: 'PERSISTENT',
      })),
    ];
  }

  /** The ops deleting these items' outcomes (a re-run). */
  async clearOps(runId: string, step: string, items: readonly number[]): Promise<TransactionOp[]> {
    const there = new Set((await this.registry.getChildren(this.paths.stepItems(runId, step))) ?? []);
    return items
      .filter((item) => there.has(String(item)))
      .map((item): TransactionOp => ({ op: 'remove', path: this.paths.item(runId, step, item) }));
  }

  /** Records what an item did in a run (created, or written over a duplicate's); false when the run is gone. */
  async recordOutcome(runId: string, step: string, item: number, outcome: ItemOutcome): Promise<boolean> {
    const path = this.paths.item(runId, step, item);
    try {
      await this.registry.create(path, json(outcome), 'PERSISTENT');
      return true;
    } catch (error) {
      const code = registryErrorCode(error);
      if (code === 'NO_NODE') return false;
      if (code !== 'NODE_EXISTS') throw error;
    }
    await this.registry.setData(path, json(outcome));
    return true;
  }

  /** Deletes the oldest ended runs beyond `keep` (never the active one). */
  async prune(keep: number): Promise<string[]> {
    const ids = await this.runIds();
    const active = (await this.readActive())?.runId;
    const old = ids.slice(0, Math.max(0, ids.length - keep)).filter((id) => id !== active);
    for (const id of old) await this.registry.removeRecursive(this.paths.run(id));
    return old;
  }
}

function json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}
