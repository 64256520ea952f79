import { WORKFLOWS_NODE } from '../workflow/workflow-paths.js';
import { describeError } from '../errors/elastic-job.errors.js';
import type { RegistryCenter } from '../registry/registry-center.js';
import type { WatchEvent } from '../registry/registry.types.js';

/** What a namespace watch reports: the jobs whose nodes changed, or that changes may have been missed. */
export type NamespaceChange =
  | { readonly kind: 'jobs'; readonly jobNames: readonly string[] }
  /** The connection came back: changes made meanwhile were not seen; everything should be read again. */
  | { readonly kind: 'resync' }
  | { readonly kind: 'connection'; readonly connected: boolean }
  /** Told only to a watch started with `{ workflows: true }`: the workflows whose runs (or definition) changed. */
  | { readonly kind: 'workflows'; readonly workflows: readonly string[] };

/** Changes closer together than this are told once, with every job they touched (a busy job writes on each firing). */
const SETTLE_MS = 200;

/**
 * Changes under a namespace, by job: one ZooKeeper persistent recursive watch on its root, added again on every
 * reconnection (a watch belongs to a connection), changes gathered for SETTLE_MS and told as the set of job names
 * (a path's first segment). close() removes the watch and the listener; it is idempotent.
 */
export class NamespaceWatch {
  private state: 'WATCHING' | 'CLOSED' = 'WATCHING';
  private pending = new Set<string>();
  private pendingWorkflows = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private readonly unsubscribe: () => void;
  private readonly watcher = (event: WatchEvent): void => this.onEvent(event);

  private constructor(
    private readonly registry: RegistryCenter,
    private readonly listener: (change: NamespaceChange) => void,
    private readonly warn: (message: string) => void,
    private readonly workflows: boolean,
  ) {
    this.unsubscribe = registry.onStateChange((change) => {
      if (this.state === 'CLOSED') return;
      if (change.state === 'SUSPENDED' || change.state === 'LOST') this.tell({ kind: 'connection', connected: false });
      if (change.state === 'RECONNECTED') {
        this.tell({ kind: 'connection', connected: true });
        registry.addPersistentRecursiveWatch('/', this.watcher).then(
          () => this.tell({ kind: 'resync' }),
          (error: unknown) => this.warn(`could not watch the namespace again: ${describeError(error)}`),
        );
      }
    });
  }

  static async start(
    registry: RegistryCenter,
    listener: (change: NamespaceChange) => void,
    warn: (message: string) => void,
    options: { workflows?: boolean } = {},
  ): Promise<NamespaceWatch> {
    const watch = new NamespaceWatch(registry, listener, warn, options.workflows === true);
    try {
      await registry.addPersistentRecursiveWatch('/', watch.watcher);
    } catch (error) {
      watch.close();
      throw error;
    }
    return watch;
  }

  close(): void {
    if (this.state === 'CLOSED') return;
    this.state = 'CLOSED';
    this.unsubscribe();
    this.registry.removePersistentRecursiveWatch('/', this.watcher);
    clearTimeout(this.timer);
    this.pending.clear();
    this.pendingWorkflows.clear();
  }

  private onEvent(event: WatchEvent): void {
    if (this.state === 'CLOSED') return;
    const segments = event.path.split('/');
    const [, jobName, child] = segments;
    if (!jobName) return;
    // History queries and their replies (executions/, written by getExecutions itself) change nothing a watcher
    // shows: told as a job change, a console re-querying on job changes would query forever.
    if (child === 'executions' && jobName !== WORKFLOWS_NODE) return;
    // The workflows' runs (workflow/workflow-paths.ts) are no job's: told as one, every item recorded would re-read it.
    // Asked for, a workflow's change is told by its name, but only down to its runs' own nodes
    // (`/.workflows/{name}/runs/{runId}`, where the steps' states are): the items' records below them are not.
    if (jobName === WORKFLOWS_NODE) {
      if (!this.workflows || !child || segments.length > 5) return;
      this.pendingWorkflows.add(child);
    } else this.pending.add(jobName);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      const jobNames = [...this.pending];
      const workflows = [...this.pendingWorkflows];
      this.pending.clear();
      this.pendingWorkflows.clear();
      if (jobNames.length) this.tell({ kind: 'jobs', jobNames });
      if (workflows.length) this.tell({ kind: 'workflows', workflows });
    }, SETTLE_MS);
  }

  private tell(change: NamespaceChange): void {
    try {
      this.listener(change);
    } catch (error) {
      this.warn(`a namespace watch listener threw: ${describeError(error)}`);
    }
  }
}
