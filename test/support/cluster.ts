import { CHILD_NODE_FLAGS, LineProcess } from './line-process.js';

export interface RunEvent {
  pid: number;
  event: 'run';
  item: number;
  param: string | null;
  start: number;
  end: number;
  aborted: boolean;
  abortedAt: number | null;
  /** The one-off job's: the job parameter of the run. */
  jobParameter?: string;
  /** The run threw (`failOnce`). */
  failed?: true;
  /** Which run of the item in its firing (`retry`). */
  attempt?: number;
}

/** An item start of a cron firing, with the firing's instant (ms). */
export interface FiredEvent {
  pid: number;
  event: 'fired';
  item: number;
  scheduled: number;
}

export interface StartEvent {
  pid: number;
  event: 'start';
  item: number;
  start: number;
}

export interface ClusterOptions {
  zkConnect: string;
  namespace: string;
  jobName?: string;
  total?: number;
  params?: string;
  cron?: string;
  sessionTimeoutMs?: number;
  workMs?: number;
  failover?: boolean;
  monitorExecution?: boolean;
  /** Items that fail (throw) the first time they run in the process; they succeed when run again. */
  failOnce?: number[];
  /** The job's `retry` option (docs/guide/item-policies.md). */
  retry?: { attempts: number; backoff?: 'fixed' | 'exponential'; delayMilliseconds?: number };
  /** The server IP the instance registers as (default: the machine's). */
  ip?: string;
  /** `once`: the app has a distribute-once job listener (its calls are `once-started` / `once-completed` events). */
  listener?: 'once';
  /**
   * `dataflow`: the job streams endlessly (a `batch` event per processed batch) until a resharding stops it;
   * `one-off`: no cron, it runs when triggered (its runs carry the job parameter).
   */
  type?: 'dataflow' | 'one-off';
  /** PostgreSQL tracing into this database. */
  databaseUrl?: string;
  /** Serve the web console (actions on) on this loopback port. */
  consolePort?: number;
  /** The console's other registries (`ElasticJobConsoleOptions.registries`). */
  consoleRegistries?: Array<{ name: string; serverLists: string; namespace: string; actions?: boolean }>;
}

/** One instance of the test app (build/test/fixtures/cluster-app.js), a real OS process. */
export class ClusterInstance extends LineProcess {
  constructor(options: ClusterOptions) {
    super(
      process.execPath,
      [...CHILD_NODE_FLAGS, 'build/test/fixtures/cluster-app.js'],
      {
        ...process.env,
        ZK_CONNECT: options.zkConnect,
        ZK_NAMESPACE: options.namespace,
        ZK_SESSION_TIMEOUT_MS: String(options.sessionTimeoutMs ?? 15_000),
        JOB_NAME: options.jobName ?? 'cluster-job',
        JOB_TOTAL: String(options.total ?? 6),
        JOB_PARAMS: options.params ?? '',
        JOB_CRON: options.cron ?? '* * * * * *',
        JOB_WORK_MS: String(options.workMs ?? 20),
        JOB_FAILOVER: String(options.failover ?? false),
        JOB_MONITOR: String(options.monitorExecution ?? true),
        ...(options.failOnce ? { JOB_FAIL_ONCE: options.failOnce.join(',') } : {}),
        ...(options.retry ? { JOB_RETRY: JSON.stringify(options.retry) } : {}),
        ...(options.ip ? { INSTANCE_IP: options.ip } : {}),
        ...(options.listener ? { JOB_LISTENER: options.listener } : {}),
        ...(options.type ? { JOB_TYPE: options.type } : {}),
        ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
        ...(options.consolePort ? { CONSOLE_PORT: String(options.consolePort) } : {}),
        ...(options.consoleRegistries ? { CONSOLE_REGISTRIES: JSON.stringify(options.consoleRegistries) } : {}),
      },
      process.env.CLUSTER_ECHO === '1',
    );
  }

  private events(): Array<{ event: string }> {
    return this.lines
      .filter((line) => line.startsWith('EVT '))
      .map((line) => JSON.parse(line.slice(4)) as { event: string });
  }

  /** The `{ip}@-@{pid}` it registered as (from its ready event). */
  instanceId(): string | undefined {
    const ready = this.events().find((event) => event.event === 'ready') as { instanceId?: string } | undefined;
    return ready?.instanceId;
  }

  starts(): StartEvent[] {
    return this.events().filter((event): event is StartEvent => event.event === 'start');
  }

  /** The items this instance took over from a crashed one (`failover.claimed`), with when. */
  claims(): Array<{ item: number; at: number }> {
    return this.events().filter((event) => event.event === 'claimed') as unknown as Array<{ item: number; at: number }>;
  }

  /** The streaming dataflow job's processed batches here. */
  batches(): Array<{ item: number; at: number }> {
    return this.events().filter((event) => event.event === 'batch') as unknown as Array<{ item: number; at: number }>;
  }

  /** The distribute-once listener's calls here. */
  onceCalls(): Array<{ event: 'once-started' | 'once-completed'; at: number; pid: number }> {
    return this.events().filter(
      (event): event is { event: 'once-started' | 'once-completed'; at: number; pid: number } =>
        event.event === 'once-started' || event.event === 'once-completed',
    );
  }

  runs(): RunEvent[] {
    return this.events().filter((event): event is RunEvent => event.event === 'run');
  }

  /** The item starts of cron firings here, with their firings' instants. */
  firings(): FiredEvent[] {
    return this.events().filter((event): event is FiredEvent => event.event === 'fired');
  }
}

/** Every cron firing's item starts, grouped by the firing's instant (in [fromMs, toMs)), in seconds. */
export function firingsByInstant(
  instances: ClusterInstance[],
  fromMs: number,
  toMs: number,
): Map<number, FiredEvent[]> {
  const buckets = new Map<number, FiredEvent[]>();
  for (const instance of instances)
    for (const fired of instance.firings()) {
      if (fired.scheduled < fromMs || fired.scheduled >= toMs) continue;
      const second = Math.floor(fired.scheduled / 1000);
      buckets.set(second, [...(buckets.get(second) ?? []), fired]);
    }
  return buckets;
}

/** Resolves once `check()` holds for the runs seen so far (checked on every new output line), bounded. */
export async function waitForRuns(
  instances: ClusterInstance[],
  check: () => boolean,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) {
      // What each instance said is the only trace of why (a bound met on a loaded machine, or a defect).
      for (const instance of instances)
        process.stderr.write(
          `--- instance ${instance.child.pid}, its last 80 lines:\n${instance.lines.slice(-80).join('\n')}\n`,
        );
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    // Wake on the next line from any instance (event-driven), at most every 250 ms to re-check the clock.
    await Promise.race([
      ...instances.map((i) =>
        i.waitForLine(() => true, 250, i.lines.length).catch(() => new Promise((r) => setTimeout(r, 250))),
      ),
    ]);
  }
}
