import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../lib/cli/arguments.js';
import { UsageError } from '../../lib/cli/commands/cli-errors.js';
import { parseConfigChanges } from '../../lib/cli/commands/config-values.js';
import { formatFields, formatTable } from '../../lib/cli/format/table.js';
import { dumpTree, formatDump } from '../../lib/cli/format/tree-dump.js';
import { FakeZookeeper } from '../support/fake-registry.js';

/** The CLI's pure parts, in milliseconds; test/cli/cli.spec.ts runs the whole CLI against a real ZooKeeper. */

const CONNECTION = ['--zk', '127.0.0.1:2181', '--namespace', 'ns'];

describe('command line', () => {
  it('reads a command, its arguments and the connection flags; --zk falls back to ZK_CONNECT', () => {
    const parsed = parseCommandLine(['disable', 'steady', '--ip', '10.0.0.1', ...CONNECTION, '--json'], {});
    expect(parsed.help).toBe(false);
    if (parsed.help) return;
    expect(parsed.invocation.command.name).toBe('disable');
    expect(parsed.invocation.input).toEqual({ args: ['steady'], ip: '10.0.0.1', sets: [] });
    expect(parsed.invocation.zookeeper).toEqual({ serverLists: '127.0.0.1:2181', namespace: 'ns' });
    expect(parsed.invocation.json).toBe(true);

    const fromEnv = parseCommandLine(['jobs', '--namespace', 'ns', '--timeout', '500', '--digest', 'u:p'], {
      ZK_CONNECT: 'zk1:2181,zk2:2181',
    });
    expect(fromEnv.help === false && fromEnv.invocation.zookeeper).toEqual({
      serverLists: 'zk1:2181,zk2:2181',
      namespace: 'ns',
      digest: 'u:p',
      connectionTimeoutMilliseconds: 500,
    });
    expect(parseCommandLine(['-h'], {})).toEqual({ help: true });
    expect(parseCommandLine(['help'], {})).toEqual({ help: true });
  });

  it('refuses with a UsageError what cannot be run, saying what is wrong', () => {
    const refused = (argv: string[]): string => {
      let thrown: unknown;
      try {
        parseCommandLine(argv, {});
      } catch (error) {
        thrown = error;
      }
      expect(thrown, argv.join(' ')).toBeInstanceOf(UsageError);
      return (thrown as Error).message;
    };
    expect(refused(['jobs', '--namespace', 'ns'])).toMatch(/--zk .* is required/);
    expect(refused(['jobs', '--zk', 'h:1'])).toMatch(/--namespace is required/);
    expect(refused(['jobs', '--zk', 'h', '--namespace', 'ns'])).toMatch(/^invalid --zk: .*'h' is not host:port/);
    expect(refused(['jobs', ...CONNECTION, '--digest', 'nopassword'])).toMatch(/^invalid --digest/);
    expect(refused(['jobs', ...CONNECTION, '--timeout', '-5'])).toMatch(/--timeout/);
    expect(refused(['trigger', ...CONNECTION])).toMatch(/'trigger' takes 1 argument, got 0/);
    expect(refused(['dump', 'a', 'b', ...CONNECTION])).toMatch(/'dump' takes 0 to 1 arguments, got 2/);
    expect(refused(['job', 'a b', ...CONNECTION])).toMatch(/<name> must be a job's name/);
    expect(refused(['sharding', 'steady', '--set', 'a=b', ...CONNECTION])).toMatch(/--set does not apply/);
    expect(refused(['config', 'steady', '--watch', ...CONNECTION])).toMatch(/--watch does not apply/);
    expect(refused(['enable-item', 'steady', '-1', ...CONNECTION])).toMatch(/Unknown option '-1'|item number/);
    expect(refused(['enable-item', 'steady', '1.5', ...CONNECTION])).toMatch(/<item> must be an item number/);
  });
});

describe('config --set', () => {
  it("reads each value by its field's type; an unknown key is passed on for the API to refuse", () => {
    expect(
      parseConfigChanges([
        'shardingTotalCount=8',
        'maxTimeDiffSeconds=-1',
        'failover=true',
        'misfire=false',
        'shardingItemParameters=0=a,1=b',
        'description=',
        'timeZone=',
        'cron=0 0 * * * *',
        'color=blue',
      ]),
    ).toEqual({
      shardingTotalCount: 8,
      maxTimeDiffSeconds: -1,
      failover: true,
      misfire: false,
      shardingItemParameters: '0=a,1=b',
      description: '',
      timeZone: undefined,
      cron: '0 0 * * * *',
      color: 'blue',
    });
    expect(() => parseConfigChanges(['shardingTotalCount=eight'])).toThrow(/takes an integer, got 'eight'/);
    expect(() => parseConfigChanges(['failover=yes'])).toThrow(/takes true or false/);
    expect(() => parseConfigChanges(['=5'])).toThrow(/--set takes key=value/);
  });
});

describe('output', () => {
  it('aligns columns two spaces apart, without trailing spaces, one line per row', () => {
    expect(
      formatTable(
        ['JOB', 'STATUS', 'DESCRIPTION'],
        [
          ['a-long-name', 'OK', ''],
          ['b', 'CRASHED', 'two\nlines'],
        ],
      ),
    ).toBe('JOB          STATUS   DESCRIPTION\na-long-name  OK\nb            CRASHED  two lines\n');
    expect(
      formatFields([
        ['cron', '* * * * * *'],
        ['shardingTotalCount', '3'],
        ['jobParameter', ''],
      ]),
    ).toBe('cron:               * * * * * *\nshardingTotalCount: 3\njobParameter:\n');
  });

  it('dumps a tree parents first, items in numeric order, values on one line', async () => {
    const zk = new FakeZookeeper();
    const registry = await zk.connect('ns');
    for (const item of [10, 2, 0])
      await registry.createWithParents(`/job/sharding/${item}/instance`, Buffer.from('i'), 'PERSISTENT');
    await registry.createWithParents('/job/config', Buffer.from('cron: x\ntotal: 1\n'), 'PERSISTENT');
    await registry.setData('/job', Buffer.from('Jobs.job'));
    const nodes = await dumpTree(registry, '/job');
    expect(nodes.map((node) => node.path)).toEqual([
      '/job',
      '/job/config',
      '/job/sharding',
      '/job/sharding/0',
      '/job/sharding/0/instance',
      '/job/sharding/2',
      '/job/sharding/2/instance',
      '/job/sharding/10',
      '/job/sharding/10/instance',
    ]);
    expect(formatDump(nodes.slice(0, 3))).toBe(
      '/job | Jobs.job\n/job/config | cron: x\\ntotal: 1\\n\n/job/sharding |\n',
    );
    // The namespace itself is not listed.
    expect((await dumpTree(registry, '/')).map((node) => node.path)[0]).toBe('/job');
  });
});
