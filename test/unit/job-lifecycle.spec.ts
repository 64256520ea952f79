import { describe, expect, it } from 'vitest';
import {
  healthOf,
  isRegistered,
  nextLifecycle,
  stopOf,
  type JobLifecycle,
  type JobLifecycleEvent,
} from '../../lib/job/scheduler/job-lifecycle.js';
import { teardownSteps } from '../../lib/job/scheduler/teardown-plan.js';

/** A job's lifecycle on its own, without ZooKeeper (issue 28): every transition, and what health and status read. */

const T0 = new Date('2026-01-01T00:00:00Z');
const T1 = new Date('2026-01-01T00:01:00Z');
const fault = new Error('connection lost');

const latent: JobLifecycle = { kind: 'latent', since: T0 };
const registering: JobLifecycle = { kind: 'registering', since: T0 };
const retryingRegistration: JobLifecycle = { kind: 'registering', since: T0, lastError: 'connection lost' };
const failed: JobLifecycle = { kind: 'failed', since: T1, lastError: 'conflict' };
const registered: JobLifecycle = { kind: 'registered', since: T0 };
const rejoining: JobLifecycle = { kind: 'rejoining', since: T0, lastError: 'old error' };
const stoppedByApp: JobLifecycle = {
  kind: 'stopped',
  stop: { by: 'application', at: T0, reason: 'the application shut down' },
  health: { registration: 'ok', since: T0 },
  wasRegistered: true,
};
const stoppedByOperator: JobLifecycle = { ...stoppedByApp, stop: { by: 'operator', at: T0, reason: 'node deleted' } };

const register: JobLifecycleEvent = { type: 'register' };
const transient: JobLifecycleEvent = { type: 'registration-failed', error: fault, permanent: false };
const permanent: JobLifecycleEvent = { type: 'registration-failed', error: new Error('conflict'), permanent: true };
const done: JobLifecycleEvent = { type: 'registered' };
const refused: JobLifecycleEvent = { type: 'refused', error: new Error('conflict') };
const rejoinFailed: JobLifecycleEvent = { type: 're-registration-failed', error: fault };
const rejoined: JobLifecycleEvent = { type: 're-registered' };
const appStop: JobLifecycleEvent = { type: 'stop', by: 'application', reason: 'the application shut down' };
const operatorStop: JobLifecycleEvent = { type: 'stop', by: 'operator', reason: 'node deleted' };
const retell: JobLifecycleEvent = { type: 'retell-stop', reason: 'the job was removed' };

describe('a job lifecycle', () => {
  it.each<[string, JobLifecycle, JobLifecycleEvent, JobLifecycle]>([
    ['register from latent', latent, register, registering],
    ['register twice', registering, register, registering],
    ['a transient failure keeps registering, since kept', registering, transient, retryingRegistration],
    ['a permanent failure', retryingRegistration, permanent, failed],
    ['refused before registering (a conflict found late)', latent, refused, failed],
    ['refused while registering: not a refusal', registering, refused, registering],
    ['refused after a stop: stays stopped', stoppedByApp, refused, stoppedByApp],
    ['registered', retryingRegistration, done, { kind: 'registered', since: T1 }],
    ['registered after a stop: stays stopped', stoppedByApp, done, stoppedByApp],
    [
      'a re-registration failing',
      registered,
      rejoinFailed,
      { kind: 'rejoining', since: T1, lastError: 'connection lost' },
    ],
    ['failing again: since kept', rejoining, rejoinFailed, { ...rejoining, lastError: 'connection lost' }],
    ['re-registered', rejoining, rejoined, { kind: 'registered', since: T1 }],
    ['re-registered while registered: unchanged', registered, rejoined, registered],
    ['re-registration events before registering: ignored', registering, rejoinFailed, registering],
    [
      'stopped by the app while registered',
      registered,
      appStop,
      {
        kind: 'stopped',
        stop: { by: 'application', at: T1, reason: 'the application shut down' },
        health: { registration: 'ok', since: T0 },
        wasRegistered: true,
      },
    ],
    [
      'stopped by an operator while rejoining',
      rejoining,
      operatorStop,
      {
        kind: 'stopped',
        stop: { by: 'operator', at: T1, reason: 'node deleted' },
        health: { registration: 'retrying', since: T0, lastError: 'old error' },
        wasRegistered: true,
      },
    ],
    [
      'stopped before it registered',
      retryingRegistration,
      appStop,
      {
        kind: 'stopped',
        stop: { by: 'application', at: T1, reason: 'the application shut down' },
        health: { registration: 'retrying', since: T0, lastError: 'connection lost' },
        wasRegistered: false,
      },
    ],
    ['a second stop: the first kept', stoppedByOperator, appStop, stoppedByOperator],
    [
      'an operator stop retold as a removal',
      stoppedByOperator,
      retell,
      { ...stoppedByOperator, stop: { ...stoppedByOperator.stop, reason: 'the job was removed' } },
    ],
    ["the app's stop is not retold", stoppedByApp, retell, stoppedByApp],
  ])('%s', (_name, state, event, expected) => {
    expect(nextLifecycle(state, event, T1)).toEqual(expected);
  });

  it('derives health, registration and the stop record from the one value', () => {
    expect(healthOf(latent)).toEqual({ registration: 'retrying', since: T0, lastError: 'not registered yet' });
    expect(healthOf(retryingRegistration)).toEqual({
      registration: 'retrying',
      since: T0,
      lastError: 'connection lost',
    });
    expect(healthOf(failed)).toEqual({ registration: 'failed', since: T1, lastError: 'conflict' });
    expect(healthOf(registered)).toEqual({ registration: 'ok', since: T0 });
    expect(healthOf(stoppedByApp)).toEqual({ registration: 'ok', since: T0 });
    expect([latent, registering, failed, registered, rejoining, stoppedByApp].map(isRegistered)).toEqual([
      false,
      false,
      false,
      true,
      true,
      false,
    ]);
    expect(stopOf(registered)).toBeUndefined();
    expect(stopOf(stoppedByOperator)).toEqual({ by: 'operator', at: T0, reason: 'node deleted' });
  });
});

describe('the teardown plan', () => {
  it.each([
    [
      'graceful (the app, removeJob), registered',
      { peersSeeUsGone: false, wasRegistered: true },
      [
        'halt-new-work',
        'drain-items',
        'stop-reactions',
        'remove-running-markers',
        'remove-leader-node',
        'remove-instance-node',
        'close-cache',
        'close-alerts',
      ],
    ],
    [
      'graceful, never registered',
      { peersSeeUsGone: false, wasRegistered: false },
      ['halt-new-work', 'drain-items', 'stop-reactions', 'close-cache', 'close-alerts'],
    ],
    [
      // Peers already see it gone: nothing may start before anything is awaited, and the leadership goes first.
      "an operator's stop",
      { peersSeeUsGone: true, wasRegistered: true },
      [
        'halt-items',
        'halt-new-work',
        'stop-reactions',
        'remove-leader-node',
        'drain-items',
        'remove-running-markers',
        'close-cache',
        'close-alerts',
      ],
    ],
  ])('%s', (_name, plan, steps) => {
    expect(teardownSteps(plan)).toEqual(steps);
  });
});
