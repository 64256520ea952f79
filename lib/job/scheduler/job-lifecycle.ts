import { describeError } from '../../errors/elastic-job.errors.js';

/**
 * `ok`: registered (or re-registered after a new session). `retrying`: not registered yet, or a registration or
 * re-registration failed and is being retried with backoff. `failed`: it cannot succeed (a name conflict, a bad
 * configuration), nothing is retried. `since`: when this state began.
 */
export interface JobHealth {
  registration: 'ok' | 'retrying' | 'failed';
  since: Date;
  lastError?: string;
}

/** How a job stopped on this instance: the app shut down (or removed it), or an operator's shutdown or removal. */
export interface JobStop {
  by: 'application' | 'operator';
  at: Date;
  reason: string;
}

/**
 * The life of one job on this instance, one value (as FiringState is a firing's):
 * - `latent`: declared, not registering yet;
 * - `registering`: the first registration runs, or is retried after a transient failure (`lastError`);
 * - `failed`: the registration cannot succeed (a conflict, a bad configuration); nothing more is tried;
 * - `registered`: in ZooKeeper, firing;
 * - `rejoining`: registered, but a re-registration on a new session failed and is retried (`lastError`);
 * - `stopped`: for good, by the app or by an operator, with what its health was then.
 * Health, status and the stop record are read from it (healthOf, isRegistered, stopOf).
 */
export type JobLifecycle =
  | { readonly kind: 'latent'; readonly since: Date }
  | { readonly kind: 'registering'; readonly since: Date; readonly lastError?: string }
  | { readonly kind: 'failed'; readonly since: Date; readonly lastError: string }
  | { readonly kind: 'registered'; readonly since: Date }
  | { readonly kind: 'rejoining'; readonly since: Date; readonly lastError: string }
  | {
      readonly kind: 'stopped';
      readonly stop: JobStop;
      readonly health: JobHealth;
      /** It was registered when it stopped: its nodes are to be removed. */
      readonly wasRegistered: boolean;
    };

/** What moves a job's lifecycle. */
export type JobLifecycleEvent =
  | { readonly type: 'register' }
  | { readonly type: 'registration-failed'; readonly error: unknown; readonly permanent: boolean }
  /** Refused before registering: a conflict found once a late connection came (nothing of it was written). */
  | { readonly type: 'refused'; readonly error: unknown }
  | { readonly type: 'registered' }
  | { readonly type: 're-registration-failed'; readonly error: unknown }
  | { readonly type: 're-registered' }
  | { readonly type: 'stop'; readonly by: JobStop['by']; readonly reason: string }
  | { readonly type: 'retell-stop'; readonly reason: string };

/**
 * The transitions, all in one place. An event that does not apply to the state leaves it as it is (a registration
 * that ends after the job stopped, a second stop): callers act on what the transition made, not on what they asked.
 */
export function nextLifecycle(state: JobLifecycle, event: JobLifecycleEvent, now: Date = new Date()): JobLifecycle {
  switch (event.type) {
    case 'register':
      return state.kind === 'latent' ? { kind: 'registering', since: state.since } : state;
    case 'registration-failed':
      if (state.kind !== 'registering') return state;
      return event.permanent
        ? { kind: 'failed', since: now, lastError: describeError(event.error) }
        : { kind: 'registering', since: state.since, lastError: describeError(event.error) };
    case 'refused':
      return state.kind === 'latent' ? { kind: 'failed', since: now, lastError: describeError(event.error) } : state;
    case 'registered':
      return state.kind === 'registering' ? { kind: 'registered', since: now } : state;
    case 're-registration-failed':
      if (state.kind === 'registered') return { kind: 'rejoining', since: now, lastError: describeError(event.error) };
      if (state.kind === 'rejoining') return { ...state, lastError: describeError(event.error) };
      return state;
    case 're-registered':
      return state.kind === 'rejoining' ? { kind: 'registered', since: now } : state;
    case 'stop':
      if (state.kind === 'stopped') return state;
      return {
        kind: 'stopped',
        stop: { by: event.by, at: now, reason: event.reason },
        health: healthOf(state),
        wasRegistered: isRegistered(state),
      };
    case 'retell-stop':
      return state.kind === 'stopped' && state.stop.by === 'operator'
        ? { ...state, stop: { ...state.stop, reason: event.reason } }
        : state;
  }
}

/** Registered in ZooKeeper and scheduled (a re-registration being retried included). */
export function isRegistered(state: JobLifecycle): boolean {
  return state.kind === 'registered' || state.kind === 'rejoining';
}

export function healthOf(state: JobLifecycle): JobHealth {
  switch (state.kind) {
    case 'latent':
      return { registration: 'retrying', since: state.since, lastError: 'not registered yet' };
    case 'registering':
      return {
        registration: 'retrying',
        since: state.since,
        lastError: state.lastError ?? 'not registered yet',
      };
    case 'failed':
      return { registration: 'failed', since: state.since, lastError: state.lastError };
    case 'registered':
      return { registration: 'ok', since: state.since };
    case 'rejoining':
      return { registration: 'retrying', since: state.since, lastError: state.lastError };
    case 'stopped':
      return state.health;
  }
}

export function stopOf(state: JobLifecycle): JobStop | undefined {
  return state.kind === 'stopped' ? state.stop : undefined;
}

/** A job's lifecycle as it moves: the one place that holds it, with the signal its waits end on when it stops. */
export class JobLifecycleHolder {
  private value: JobLifecycle = { kind: 'latent', since: new Date() };
  /**
   * Made when a wait first needs it (a retry's backoff, a distribute-once round): an AbortController and its
   * signal, with a listener, were ~800 bytes a job, and most jobs never wait. Aborted by a stop callback.
   */
  private stopping: AbortController | undefined;
  private stopCallbacks: Array<() => void> | undefined;

  get current(): JobLifecycle {
    return this.value;
  }

  /** The job has stopped (for good: a stopped lifecycle never moves on). */
  get stopped(): boolean {
    return this.value.kind === 'stopped';
  }

  /** Aborted when the job stops: retry waits end at once. */
  get stopSignal(): AbortSignal {
    if (!this.stopping) {
      const stopping = (this.stopping = new AbortController());
      this.onStop(() => stopping.abort());
    }
    return this.stopping.signal;
  }

  /** `callback` once, when the job stops (at once when it has). */
  onStop(callback: () => void): void {
    if (this.stopped) callback();
    // concat: an array of exactly the callbacks (push would leave room for 16 more).
    else this.stopCallbacks = this.stopCallbacks ? this.stopCallbacks.concat(callback) : [callback];
  }

  /** Moves the lifecycle (nextLifecycle) and returns where it is now. */
  move(event: JobLifecycleEvent): JobLifecycle {
    this.value = nextLifecycle(this.value, event);
    if (this.value.kind === 'stopped') {
      const callbacks = this.stopCallbacks;
      this.stopCallbacks = undefined;
      for (const callback of callbacks ?? []) callback();
    }
    return this.value;
  }
}
