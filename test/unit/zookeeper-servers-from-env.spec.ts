import { describe, expect, it } from 'vitest';
import { JobConfigurationError } from '../../lib/index.js';
import { resolveZookeeperSettings, validateZookeeperOptions } from '../../lib/registry/zookeeper-settings.js';

/** `zookeeper.serverLists` left out: ZK_CONNECT, as the CLI reads it (lib/cli/arguments.ts); neither is refused. */

describe('zookeeper.serverLists from ZK_CONNECT', () => {
  it('is taken from ZK_CONNECT when left out, and what is given wins over it', () => {
    const env = { ZK_CONNECT: 'zk-env:2181' };
    expect(() => validateZookeeperOptions({ namespace: 'app' }, env)).not.toThrow();
    const saved = process.env.ZK_CONNECT;
    process.env.ZK_CONNECT = 'zk-env:2181';
    try {
      expect(resolveZookeeperSettings({ namespace: 'app' }).serverLists).toBe('zk-env:2181');
      expect(resolveZookeeperSettings({ serverLists: 'zk-code:2181', namespace: 'app' }).serverLists).toBe(
        'zk-code:2181',
      );
    } finally {
      if (saved === undefined) delete process.env.ZK_CONNECT;
      else process.env.ZK_CONNECT = saved;
    }
  });

  it('refuses neither (an empty ZK_CONNECT is none), naming both ways', () => {
    for (const env of [{}, { ZK_CONNECT: '' }]) {
      const error = catchError(() => validateZookeeperOptions({ namespace: 'app' }, env));
      expect(error).toBeInstanceOf(JobConfigurationError);
      expect((error as JobConfigurationError).field).toBe('zookeeper.serverLists');
      expect((error as Error).message).toMatch(/is not given and ZK_CONNECT is not set: give zookeeper\.serverLists/);
      expect((error as Error).message).toContain('npx nestjs-elastic-job zookeeper');
    }
  });

  it('refuses a bad ZK_CONNECT as a bad serverLists, saying where it came from', () => {
    const error = catchError(() => validateZookeeperOptions({ namespace: 'app' }, { ZK_CONNECT: 'zk1:99999' }));
    expect((error as JobConfigurationError).field).toBe('zookeeper.serverLists');
    expect((error as Error).message).toContain('(got "zk1:99999" from ZK_CONNECT)');
  });
});

function catchError(call: () => void): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  return undefined;
}
