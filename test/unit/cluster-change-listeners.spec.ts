import { describe, expect, it } from 'vitest';
import { RegistryError } from '../../lib/errors/elastic-job.errors.js';
import type { JobContext } from '../../lib/job/context/job-context.js';
import { ClusterChangeListeners } from '../../lib/job/reaction/cluster-change-listeners.js';
import type { ClusterChangeHandler } from '../../lib/job/context/cluster-change-handler.js';
import { TriggerReactions } from '../../lib/job/trigger/trigger-reactions.js';
import type { ConnectionStateChange } from '../../lib/registry/registry.types.js';
import type { TreeEvent } from '../../lib/registry/tree-cache.js';

/** One handler per concern (issue 28): the listeners hand every change to each, in order, and relay the registration. */

/** A job context whose tree cache hands its changes to `listener` while subscribed. */
function cacheListenedTo(): { ctx: JobContext; listener: ((event: TreeEvent) => void) | undefined } {
  const tree: { ctx: JobContext; listener: ((event: TreeEvent) => void) | undefined } = {
    ctx: undefined as unknown as JobContext,
    listener: undefined,
  };
  tree.ctx = {
    storage: {
      cached: {
        listen: (heard: (event: TreeEvent) => void) => {
          tree.listener = heard;
          return () => (tree.listener = undefined);
        },
      },
    },
  } as unknown as JobContext;
  return tree;
}

/** A job context, not connected, whose trigger read answers with `read()`; its state listeners and warnings. */
function disconnectedJob(read: () => Promise<unknown>): {
  ctx: JobContext;
  stateListeners: Set<(change: ConnectionStateChange) => void>;
  warned: string[];
} {
  const stateListeners = new Set<(change: ConnectionStateChange) => void>();
  const warned: string[] = [];
  const ctx = {
    instanceId: 'me',
    paths: { trigger: (instance: string) => `/job/trigger/${instance}` },
    logger: { warn: (message: string) => warned.push(message) },
    connection: {
      isConnected: () => false,
      onStateChange: (listener: (change: ConnectionStateChange) => void) => {
        stateListeners.add(listener);
        return () => stateListeners.delete(listener);
      },
    },
    storage: { direct: { get: read } },
  } as unknown as JobContext;
  return { ctx, stateListeners, warned };
}

describe('ClusterChangeListeners', () => {
  it('hands each change to every handler in order, tells them the registration, and stops hearing', () => {
    const tree = cacheListenedTo();
    const heard: string[] = [];
    const handler = (name: string): ClusterChangeHandler => ({
      start: (registering) => heard.push(`${name} start ${registering}`),
      registered: () => heard.push(`${name} registered`),
      onChange: (event) => heard.push(`${name} ${event.type} ${event.path}`),
    });
    const listeners = new ClusterChangeListeners(tree.ctx, [
      handler('election'),
      { onChange: () => heard.push('trigger') },
    ]);
    listeners.start({ registering: true });
    listeners.start({ registering: true }); // subscribed once
    tree.listener!({ type: 'ADDED', path: '/job/instances/a', data: '' } as TreeEvent);
    listeners.registered();
    listeners.stop();
    expect(tree.listener).toBeUndefined();
    expect(heard).toEqual([
      'election start true',
      'election start true',
      'election ADDED /job/instances/a',
      'trigger',
      'election registered',
    ]);
  });

  it('closes: stops hearing, and each handler lets go of what it was waiting for', () => {
    const tree = cacheListenedTo();
    const closed: string[] = [];
    const listeners = new ClusterChangeListeners(tree.ctx, [
      { onChange: () => undefined, close: () => closed.push('trigger') },
      { onChange: () => undefined },
    ]);
    listeners.start();
    listeners.close();
    expect(tree.listener).toBeUndefined();
    expect(closed).toEqual(['trigger']);
  });
});

describe('TriggerReactions', () => {
  it('gives up a consume waiting for the connection when the job stops: nothing keeps listening', async () => {
    const { ctx, stateListeners, warned } = disconnectedJob(() =>
      Promise.reject(new RegistryError('CONNECTION_LOSS', '/job/trigger/me', 'lost')),
    );
    const fired: Array<string | undefined> = [];
    const reactions = new TriggerReactions(ctx, (parameter) => fired.push(parameter));
    reactions.onChange({ type: 'ADDED', path: '/job/trigger/me', data: '' } as TreeEvent);
    await new Promise((resolve) => setImmediate(resolve));
    expect(warned).toEqual([expect.stringContaining('taken once connected to ZooKeeper again')]);
    expect(stateListeners.size).toBe(1);

    reactions.close();
    expect(stateListeners.size).toBe(0);
    expect(fired).toEqual([]);
  });

  it('does not wait for a reconnection when its consume fails after the job stopped', async () => {
    let failRead!: (error: unknown) => void;
    const { ctx, stateListeners } = disconnectedJob(() => new Promise((_, reject) => (failRead = reject)));
    const reactions = new TriggerReactions(ctx, () => undefined);
    reactions.onChange({ type: 'ADDED', path: '/job/trigger/me', data: '' } as TreeEvent);
    reactions.close(); // the job stops with the consume's read in flight
    failRead(new RegistryError('CONNECTION_LOSS', '/job/trigger/me', 'lost'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(stateListeners.size).toBe(0);
  });
});
