import type { Logger } from '@nestjs/common';
import { describeError, withinBound } from '../../errors/elastic-job.errors.js';

/** How long a teardown's ZooKeeper steps (markers, leader and instance nodes) may take in all. */
export const DEREGISTRATION_BOUND_MS = 5_000;

/**
 * How one job stops on this instance. One plan for the app's graceful stop (and `removeJob`, which is the same
 * stop for one job) and for an operator's shutdown or removal; where they differ, a named parameter says why.
 */
export interface TeardownPlan {
  /**
   * Peers already see this instance gone (an operator deleted its instance node, or the job's tree): they may take
   * its items over at once, so nothing may start any more before anything is awaited (running items are halted,
   * their signal aborted, not left to finish), and the leadership goes first. The instance node needs no removal.
   */
  readonly peersSeeUsGone: boolean;
  /**
   * It was registered: its nodes in ZooKeeper are removed. In a graceful stop, only if the session is up when the
   * items have drained (what is not removed goes with the session; peers then wait for its timeout, as for a crash).
   */
  readonly wasRegistered: boolean;
}

export type TeardownStep =
  | 'halt-new-work'
  | 'halt-items'
  | 'drain-items'
  | 'stop-reactions'
  | 'remove-running-markers'
  | 'remove-leader-node'
  | 'remove-instance-node'
  | 'close-cache'
  | 'close-alerts';

/** The steps of a plan, in order (docs/SPEC.md §3 shutdown; ElasticJob's shutdown listener for an operator's). */
export function teardownSteps(plan: TeardownPlan): TeardownStep[] {
  if (plan.peersSeeUsGone)
    return [
      'halt-items',
      'halt-new-work',
      'stop-reactions',
      ...(plan.wasRegistered ? (['remove-leader-node'] as const) : []),
      'drain-items',
      ...(plan.wasRegistered ? (['remove-running-markers'] as const) : []),
      'close-cache',
      'close-alerts',
    ];
  return [
    'halt-new-work',
    'drain-items',
    'stop-reactions',
    ...(plan.wasRegistered ? (['remove-running-markers', 'remove-leader-node', 'remove-instance-node'] as const) : []),
    'close-cache',
    // Last: the alerts of items that failed while draining still go, and waiting for them delays no peer.
    'close-alerts',
  ];
}

/** The ZooKeeper steps: bounded together, so that a silent partition cannot hold a shutdown. */
const ZOOKEEPER_STEPS: ReadonlySet<TeardownStep> = new Set([
  'remove-running-markers',
  'remove-leader-node',
  'remove-instance-node',
]);

/** What each step does, for one job. `drain-items` is bounded by its own timeout (the shutdown timeout). */
export type TeardownActions = Record<TeardownStep, () => unknown>;

/**
 * Runs a plan's steps in order; a failing step is logged and the next runs. ZooKeeper steps in a row share one
 * deadline (the session timeout, at most DEREGISTRATION_BOUND_MS): what is not removed by then goes with the session,
 * and peers wait for its timeout as for a crash. Waiting for the items is bounded by the drain's own timeout.
 */
export async function runTeardown(
  plan: TeardownPlan,
  actions: TeardownActions,
  options: { sessionTimeoutMs: number; logger: Logger; label: string; connected: () => boolean },
): Promise<void> {
  let deadline: number | undefined;
  let checkedConnection = false;
  let skipZookeeper = false;
  for (const step of teardownSteps(plan)) {
    const what = step.replace(/-/g, ' ');
    if (!ZOOKEEPER_STEPS.has(step))
      deadline = undefined; // the next ZooKeeper steps get a bound of their own
    else if (!checkedConnection) {
      checkedConnection = true;
      skipZookeeper = !plan.peersSeeUsGone && !options.connected();
    }
    if (skipZookeeper && ZOOKEEPER_STEPS.has(step)) continue;
    try {
      if (!ZOOKEEPER_STEPS.has(step)) {
        // Synchronous steps run without a pause between them: an operator's stop halts everything before any await.
        const done = actions[step]();
        if (done instanceof Promise) await done;
        continue;
      }
      deadline ??= Date.now() + Math.min(options.sessionTimeoutMs, DEREGISTRATION_BOUND_MS);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no time left');
      await withinBound(Promise.resolve(actions[step]()), left, `${options.label}: ${what}`);
    } catch (error) {
      options.logger.warn(`${options.label}: could not ${what}: ${describeError(error)}`);
    }
  }
}
