import { describe, expect, it } from 'vitest';
import type { JobContext } from '../../lib/job/context/job-context.js';
import { ClusterChangeListeners } from '../../lib/job/reaction/cluster-change-listeners.js';
import type { ClusterChangeHandler } from '../../lib/job/context/cluster-change-handler.js';
import type { TreeEvent } from '../../lib/registry/tree-cache.js';

/** One handler per concern (issue 28): the listeners hand every change to each, in order, and relay the registration. */

describe('ClusterChangeListeners', () => {
  it('hands each change to every handler in order, tells them the registration, and stops hearing', () => {
    let listener: ((event: TreeEvent) => void) | undefined;
    const ctx = {
      storage: {
        cached: {
          listen: (heard: (event: TreeEvent) => void) => {
            listener = heard;
            return () => (listener = undefined);
          },
        },
      },
    } as unknown as JobContext;
    const heard: string[] = [];
    const handler = (name: string): ClusterChangeHandler => ({
      start: (registering) => heard.push(`${name} start ${registering}`),
      registered: () => heard.push(`${name} registered`),
      onChange: (event) => heard.push(`${name} ${event.type} ${event.path}`),
    });
    const listeners = new ClusterChangeListeners(ctx, [handler('election'), { onChange: () => heard.push('trigger') }]);
    listeners.start({ registering: true });
    listeners.start({ registering: true }); // subscribed once
    listener!({ type: 'ADDED', path: '/job/instances/a', data: '' } as TreeEvent);
    listeners.registered();
    listeners.stop();
    expect(listener).toBeUndefined();
    expect(heard).toEqual([
      'election start true',
      'election start true',
      'election ADDED /job/instances/a',
      'trigger',
      'election registered',
    ]);
  });
});
