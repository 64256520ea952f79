import { describe, expect, it } from 'vitest';
import { NamespacePaths } from '../../lib/registry/namespace-paths.js';
import { depthOf, PersistentWatchers, rootAtDepth } from '../../lib/registry/persistent-watchers.js';
import type { RegistryStats } from '../../lib/registry/registry-center.js';
import type { ZookeeperTransport } from '../../lib/registry/zookeeper-transport.js';

/** Which roots' watchers hear a notification, in order (the transport is only asked to add the server-side watch). */
function watchersOn(roots: string[]): { heard: string[]; watches: PersistentWatchers; stats: RegistryStats } {
  const stats: RegistryStats = { reads: 0, writes: 0, watchRequests: 0, watchEvents: 0 };
  const transport = { addPersistentRecursiveWatch: async () => undefined } as unknown as ZookeeperTransport;
  const watches = new PersistentWatchers(transport, new NamespacePaths('ns'), stats);
  const heard: string[] = [];
  for (const root of roots) void watches.add(root, (event) => heard.push(`${root} ${event.type} ${event.path}`));
  return { heard, watches, stats };
}

describe('persistent watch notifications go to the watchers of every watched root above them, nearest first', () => {
  it('finds the roots at each watched depth', () => {
    const { heard, watches, stats } = watchersOn(['/', '/a', '/a/b', '/c', '/a/bb/c']);
    watches.dispatch({ type: 'NODE_CREATED', path: '/ns/a/b/x' });
    watches.dispatch({ type: 'NODE_DELETED', path: '/ns/c' });
    watches.dispatch({ type: 'NODE_DATA_CHANGED', path: '/ns/cc/d' });
    watches.dispatch({ type: 'NODE_CREATED', path: '/ns' });
    watches.dispatch({ type: 'NODE_CREATED', path: '/ns/a/bb' });
    expect(heard).toEqual([
      '/a/b NODE_CREATED /a/b/x',
      '/a NODE_CREATED /a/b/x',
      '/ NODE_CREATED /a/b/x',
      '/c NODE_DELETED /c',
      '/ NODE_DELETED /c',
      '/ NODE_DATA_CHANGED /cc/d',
      '/ NODE_CREATED /',
      '/a NODE_CREATED /a/bb',
      '/ NODE_CREATED /a/bb',
    ]);
    expect(stats.watchEvents).toBe(heard.length);
  });

  it('ignores children notifications, paths outside the namespace, and roots no longer watched', () => {
    const { heard, watches } = watchersOn(['/a']);
    watches.dispatch({ type: 'NODE_CHILDREN_CHANGED', path: '/ns/a' });
    watches.dispatch({ type: 'NODE_CREATED', path: '/other/a' });
    watches.dispatch({ type: 'NODE_CREATED', path: '/nsa/x' });
    expect(heard).toEqual([]);
    const silent = (): void => {
      throw new Error('not expected');
    };
    void watches.add('/a/b', silent);
    watches.remove('/a/b', silent);
    watches.dispatch({ type: 'NODE_CREATED', path: '/ns/a/b' });
    expect(heard).toEqual(['/a NODE_CREATED /a/b']);
  });

  it('keeps the depth index as roots come and go, rebuilt only when a depth appears or empties', () => {
    const { heard, watches } = watchersOn([]);
    const depthIndex = (): number[] => (watches as unknown as { depths: number[] }).depths;
    const watcher = (root: string) => (event: { type: string; path: string }) =>
      heard.push(`${root} ${event.type} ${event.path}`);
    const [a, b, c, ax, def] = ['/a', '/b', '/c', '/a/x', '/d/e/f'].map(watcher);
    void watches.add('/a', a!);
    void watches.add('/b', b!);
    void watches.add('/a/x', ax!);
    const before = depthIndex();
    // One root more at a depth already watched: the same index (ten thousand jobs add ten thousand roots at depth
    // 1; rebuilding the index from every root on each add was quadratic).
    void watches.add('/c', c!);
    expect(depthIndex()).toBe(before);
    watches.remove('/a', a!);
    watches.dispatch({ type: 'NODE_CREATED', path: '/ns/a/x/y' });
    watches.dispatch({ type: 'NODE_CREATED', path: '/ns/b/y' });
    watches.dispatch({ type: 'NODE_CREATED', path: '/ns/c/y' });
    expect(heard).toEqual(['/a/x NODE_CREATED /a/x/y', '/b NODE_CREATED /b/y', '/c NODE_CREATED /c/y']);
    expect(depthIndex()).toEqual([2, 1]);
    heard.length = 0;
    watches.remove('/a/x', ax!);
    expect(depthIndex()).toEqual([1]);
    void watches.add('/d/e/f', def!);
    expect(depthIndex()).toEqual([3, 1]);
    watches.dispatch({ type: 'NODE_CREATED', path: '/ns/d/e/f/g' });
    watches.dispatch({ type: 'NODE_CREATED', path: '/ns/a/x/y' });
    expect(heard).toEqual(['/d/e/f NODE_CREATED /d/e/f/g']);
  });

  it('measures depths and roots', () => {
    expect(['/', '/a', '/a/b', '/a/b/c'].map(depthOf)).toEqual([0, 1, 2, 3]);
    expect(rootAtDepth('/a/b/c', 0)).toBe('/');
    expect(rootAtDepth('/a/b/c', 1)).toBe('/a');
    expect(rootAtDepth('/a/b/c', 3)).toBe('/a/b/c');
    expect(rootAtDepth('/a/b/c', 4)).toBeUndefined();
    expect(rootAtDepth('/', 1)).toBeUndefined();
  });
});
