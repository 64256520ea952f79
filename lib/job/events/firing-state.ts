/**
 * Why a firing runs: its cron instant, a manual trigger, items this instance took over from a crashed one, or
 * the catch-up of a firing skipped while disconnected (ElasticJob's NORMAL_TRIGGER, FAILOVER, MISFIRE).
 */
export type FiringSource = 'CRON' | 'TRIGGER' | 'FAILOVER' | 'CATCH_UP';

/** A firing queued behind the current one: a trigger that arrived meanwhile, or a failover item claimed at its end. */
export type QueuedFiring = 'TRIGGER' | 'FAILOVER';

/**
 * The executor's state, one field (docs/design/code-map.md):
 * - IDLE: no firing runs. `missed`: a firing was skipped with no ZooKeeper misfire flag to show for it (no
 *   connection), run as a catch-up when the connection comes back.
 * - FIRING: one firing runs (`done` settles when it is over). `missed`: a cron instant came while it ran (an
 *   overlap), so its misfire loop runs the items once more. `queued`: one more firing to start when it ends.
 * - STOPPED: no firing starts again; `draining` is the firing that was running when it stopped, if any. `halted`:
 *   why items may not even start any more (an operator's shutdown: peers may already run them).
 * Any phase is `rejoining` from a session lost until this instance has re-registered on the new one: no item
 * starts meanwhile, as ElasticJob pauses its jobs on LOST and resumes them after re-registering
 * (RegistryCenterConnectionStateListener in ElasticJob's source): the cache may still show as ours items a peer took
 * over when our instance node went. A firing may be running when the session goes, and the job may stop before it
 * rejoins (a firing draining at shutdown starts none of its items left).
 */
export type FiringState =
  | { readonly phase: 'IDLE'; readonly missed: boolean; readonly rejoining?: true }
  | {
      readonly phase: 'FIRING';
      readonly source: FiringSource;
      readonly done: Promise<void>;
      readonly missed: boolean;
      readonly queued: QueuedFiring | undefined;
      readonly rejoining?: true;
    }
  | {
      readonly phase: 'STOPPED';
      readonly draining: Promise<void> | undefined;
      readonly halted?: string;
      readonly rejoining?: true;
    };

export const IDLE: FiringState = { phase: 'IDLE', missed: false };
