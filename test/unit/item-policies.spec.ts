import { describe, expect, it, vi } from 'vitest';
import { JobConfigurationError, type ShardedJobOptions } from '../../lib/index.js';
import { resolveJobConfiguration } from '../../lib/job/config/job-configuration.validator.js';
import { fromConfigYaml, toConfigYaml } from '../../lib/job/config/job-configuration.yaml.js';
import { retryDelay } from '../../lib/job/policies/backoff.js';
import { itemPolicies } from '../../lib/job/policies/item-policies.js';
import { ItemLogger } from '../../lib/job/policies/item-lines.js';
import { KeptLines } from '../../lib/job/policies/kept-lines.js';
import { NO_ITEM_POLICIES } from '../../lib/job/policies/item-policies.js';
import { RunningItem, runAttempts } from '../../lib/job/executor/item-attempts.js';
import type { JobContext } from '../../lib/job/context/job-context.js';
import type { FiringReport } from '../../lib/job/executor/firing-report.js';
import { ExecutionLog } from '../../lib/tracing/execution-log.js';
import { ConsoleLogger, Logger, type LoggerService, type LogLevel } from '@nestjs/common';

/** The item policies' settings (docs/guide/item-policies.md): stored in props, checked as declared options are. */

const base: ShardedJobOptions = { jobName: 'nightly', cron: '0 0 1 * * *', shardingTotalCount: 2 };

function refusal(options: Partial<ShardedJobOptions>): string {
  try {
    resolveJobConfiguration({ ...base, ...options } as ShardedJobOptions);
  } catch (error) {
    if (error instanceof JobConfigurationError) return error.message;
    throw error;
  }
  throw new Error('not refused');
}

describe('item policy settings', () => {
  it('are stored in props under item.* names, and read back from the config node', () => {
    const config = resolveJobConfiguration({
      ...base,
      props: { 'http.uri': 'http://x' },
      itemTimeoutMilliseconds: 5000,
      retry: { attempts: 3, backoff: 'exponential', delayMilliseconds: 100, maxDelayMilliseconds: 1000, jitter: 0.5 },
      overlap: 'cover-early',
    });
    expect(config.props).toEqual({
      'http.uri': 'http://x',
      'item.overlap': 'cover-early',
      'item.retry.attempts': '3',
      'item.retry.backoff': 'exponential',
      'item.retry.delay.milliseconds': '100',
      'item.retry.jitter': '0.5',
      'item.retry.max.delay.milliseconds': '1000',
      'item.timeout.milliseconds': '5000',
    });
    const stored = fromConfigYaml(toConfigYaml(config));
    expect(itemPolicies('nightly', stored.props)).toEqual({
      timeoutMs: 5000,
      retry: { attempts: 3, backoff: 'exponential', delayMs: 100, maxDelayMs: 1000, jitter: 0.5 },
      overlap: 'cover-early',
    });
    // None set: no props written, no policy.
    expect(resolveJobConfiguration(base).props).toEqual({});
    expect(itemPolicies('nightly', {})).toEqual({ timeoutMs: 0, retry: undefined, overlap: 'misfire' });
  });

  it.each([
    [
      { itemTimeoutMilliseconds: -1 },
      "invalid 'itemTimeoutMilliseconds': must be a whole number from 0 to 2147483647, got -1",
    ],
    [
      { itemTimeoutMilliseconds: 1.5 },
      "invalid 'itemTimeoutMilliseconds': must be a whole number from 0 to 2147483647, got 1.5",
    ],
    [
      { itemTimeoutMilliseconds: 1e12 },
      "invalid 'itemTimeoutMilliseconds': must be a whole number from 0 to 2147483647, got 1000000000000",
    ],
    [
      { itemTimeoutMilliseconds: '500' },
      `invalid 'itemTimeoutMilliseconds': must be a whole number from 0 to 2147483647, got "500"`,
    ],
    [{ retry: { attempts: 0 } }, "invalid 'retry.attempts': must be a whole number from 1 to 100, got 0"],
    [{ retry: { attempts: 2.5 } }, "invalid 'retry.attempts': must be a whole number from 1 to 100, got 2.5"],
    [{ retry: { attempts: 1000 } }, "invalid 'retry.attempts': must be a whole number from 1 to 100, got 1000"],
    [
      { retry: { attempts: 3, backoff: 'linear' } },
      `invalid 'retry.backoff': must be one of 'fixed', 'exponential', got "linear"`,
    ],
    [{ retry: { attempts: 3, delayMilliseconds: -5 } }, "invalid 'retry.delayMilliseconds': must be a whole number"],
    [{ retry: { attempts: 3, jitter: 2 } }, "invalid 'retry.jitter': must be a number from 0 to 1"],
    [{ retry: { attempts: 3, delay: 5 } }, "invalid 'retry.delay': is no retry setting"],
    [{ retry: 3 }, "invalid 'retry': must be an object"],
    [
      { retry: { attempts: 3, delayMilliseconds: 500, maxDelayMilliseconds: 100 } },
      "invalid 'retry.maxDelayMilliseconds': (100) is below the first delay (500)",
    ],
    [{ overlap: 'serial' }, `invalid 'overlap': must be one of 'misfire', 'cover-early', got "serial"`],
    [
      { props: { 'item.timeout.milliseconds': '-5' } },
      `invalid 'props.item.timeout.milliseconds': must be a whole number from 0 to 2147483647, got "-5"`,
    ],
    [
      { props: { 'item.timeout.milliseconds': 'soon' } },
      `invalid 'props.item.timeout.milliseconds': must be a whole number`,
    ],
    [
      { props: { 'item.timeout.milliseconds': '1.5' } },
      `invalid 'props.item.timeout.milliseconds': must be a whole number`,
    ],
    [
      { props: { 'item.timeout.milliseconds': '99999999999' } },
      `invalid 'props.item.timeout.milliseconds': must be a whole number`,
    ],
    [
      { props: { 'item.retry.backoff': 'linear' } },
      `invalid 'props.item.retry.backoff': must be one of 'fixed', 'exponential'`,
    ],
    [{ props: { 'item.retrys': '3' } }, "invalid 'props.item.retrys': is no item policy; the names are"],
    [
      { props: { 'item.timeout.milliseconds': '5' }, itemTimeoutMilliseconds: 5 },
      "invalid 'props.item.timeout.milliseconds': is also given as an option",
    ],
  ] as const)('refuses %j naming its field', (options, message) => {
    expect(refusal(options as Partial<ShardedJobOptions>)).toContain(`Job 'nightly': ${message}`);
  });
});

describe('retry delays', () => {
  const policy = { attempts: 6, backoff: 'exponential' as const, delayMs: 100, maxDelayMs: 0, jitter: 0 };
  it('fixed waits the delay; exponential doubles it from the first retry, up to its cap', () => {
    expect([2, 3, 4].map((next) => retryDelay({ ...policy, backoff: 'fixed' }, next))).toEqual([100, 100, 100]);
    expect([2, 3, 4, 5].map((next) => retryDelay(policy, next))).toEqual([100, 200, 400, 800]);
    expect([2, 3, 4, 5].map((next) => retryDelay({ ...policy, maxDelayMs: 300 }, next))).toEqual([100, 200, 300, 300]);
    expect(retryDelay({ ...policy, delayMs: 2_000_000_000 }, 100)).toBe(2_147_483_647);
  });
  it('jitter draws the wait in [wait × (1 − jitter), wait]', () => {
    expect(retryDelay({ ...policy, jitter: 0.5 }, 3, () => 0)).toBe(200);
    expect(retryDelay({ ...policy, jitter: 0.5 }, 3, () => 0.999999)).toBe(100);
  });
});

describe('the item logger', () => {
  it('keeps 300 lines or 32 KB, counting the rest, and cuts long lines', () => {
    const logger = new ItemLogger(new Logger('test', { timestamp: false }), 0);
    Logger.overrideLogger(false);
    try {
      logger.log('x'.repeat(5000));
      for (let i = 0; i < 400; i++) logger.warn(`line ${i}`);
    } finally {
      Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose', 'fatal']);
    }
    expect(logger.kept.lines[0]!.message).toHaveLength(2000);
    expect(logger.kept.lines).toHaveLength(300);
    expect(logger.kept.dropped).toBe(101);
    const big = new ItemLogger(new Logger('test'), 0);
    Logger.overrideLogger(false);
    for (let i = 0; i < 40; i++) big.log('y'.repeat(2000));
    Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose', 'fatal']);
    expect(big.kept.lines).toHaveLength(16);
    expect(big.kept.dropped).toBe(24);
  });

  it('counts the 32 KB in UTF-8 bytes exactly near the bound, and reads back every level and character', () => {
    const kept = new KeptLines();
    for (let i = 0; i < 6; i++) kept.add('warn', '€'.repeat(2000)); // 6,000 bytes each: 5 fit (30,000)
    kept.add('error', 'a'.repeat(2000)); // 2,000 more: 32,000, within 32,768 though 3 × its length is not
    kept.add('fatal', '😀'.repeat(500)); // 2,000 bytes: past the bound
    kept.add('debug', 'ü😀'); // 6 bytes: fits
    kept.add('verbose', '');
    expect(kept.dropped).toBe(2);
    const lines = kept.lines;
    expect(lines.map((line) => [line.level, line.message.length])).toEqual([
      ...Array.from({ length: 5 }, () => ['warn', 2000]),
      ['error', 2000],
      ['debug', 3],
      ['verbose', 0],
    ]);
    expect(lines[0]!.message).toBe('€'.repeat(2000));
    expect(lines[6]!.message).toBe('ü😀');
    expect(lines.every((line) => Number.isFinite(line.at) && line.at > 0)).toBe(true);
  });

  it("is read while the item runs: each read a new array holding the lines so far, the reader's to keep", () => {
    const logger = new ItemLogger(new Logger('test'), 0);
    Logger.overrideLogger(false);
    try {
      logger.log('one');
      const first = logger.kept.lines;
      logger.error(new Error('two'));
      expect(first.map((line) => line.message)).toEqual(['one']);
      const second = logger.kept.lines;
      expect(second).toHaveLength(2);
      expect(second[1]!.level).toBe('error');
      expect(second[1]!.message).toContain('Error: two');
      expect(logger.kept.size).toBe(2);
    } finally {
      Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose', 'fatal']);
    }
  });

  it('keeps lines logged between reads in order, each read seeing the lines not yet written', () => {
    const kept = new KeptLines();
    kept.add('log', 'one');
    kept.add('warn', 'two');
    expect(kept.lines.map((line) => line.message)).toEqual(['one', 'two']); // read before any compact
    kept.add('error', 'three');
    kept.compact();
    kept.add('debug', 'four');
    expect(kept.lines.map((line) => [line.level, line.message])).toEqual([
      ['log', 'one'],
      ['warn', 'two'],
      ['error', 'three'],
      ['debug', 'four'],
    ]);
    kept.add('fatal', 'five');
    expect(kept.lines.map((line) => line.message)).toEqual(['one', 'two', 'three', 'four', 'five']);
  });

  it('counts the bytes of lines joined together line by line: a lone surrogate is 3 bytes, not half of a pair', () => {
    const kept = new KeptLines();
    kept.add('log', 'x\uD83D'); // 1 + 3 bytes alone; joined with the next they would make one 4-byte character
    kept.add('log', '\uDE00y'); // 3 + 1
    for (let i = 0; i < 16; i++) kept.add('log', 'a'.repeat(2000)); // 32,000
    kept.add('log', 'b'.repeat(760)); // 32,768: the bound, exactly
    kept.add('log', 'c'); // past it (counted as joined, 6 bytes for the first two, it would fit)
    expect(kept.dropped).toBe(1);
    const lines = kept.lines;
    expect(lines).toHaveLength(19);
    expect(lines[0]!.message).toBe('x\uFFFD'); // each written alone: a lone surrogate is U+FFFD in UTF-8
    expect(lines[1]!.message).toBe('\uFFFDy');
    expect(lines[18]!.message).toBe('b'.repeat(760));
  });

  it("keeps each line's epoch time exactly, days apart, a clock set back carrying the first line's", () => {
    const first = 1_800_000_000_000;
    const now = vi.spyOn(Date, 'now');
    try {
      const kept = new KeptLines();
      for (const at of [first, first + 1, first + 10 * 86_400_000 + 7, first - 5]) {
        now.mockReturnValueOnce(at);
        kept.add('verbose', `at ${at}`);
      }
      expect(kept.lines.map((line) => [line.at, line.level])).toEqual([
        [first, 'verbose'],
        [first + 1, 'verbose'],
        [first + 10 * 86_400_000 + 7, 'verbose'],
        [first, 'verbose'],
      ]);
    } finally {
      now.mockRestore();
    }
  });

  it("joins an item's lines at its end, so that their strings do not outlive it", () => {
    const logger = new ItemLogger(new Logger('test'), 0);
    Logger.overrideLogger(false);
    try {
      for (let i = 0; i < 3; i++) logger.log(`line ${i}`);
      expect(Reflect.get(logger.kept, 'pending')).toHaveLength(3);
      logger.end();
      expect(Reflect.get(logger.kept, 'pending')).toHaveLength(0);
      expect(logger.kept.lines.map((line) => line.message)).toEqual(['line 0', 'line 1', 'line 2']);
    } finally {
      Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose', 'fatal']);
    }
  });

  it("keeps a line whose level the app's logger has off without passing it down; the others reach it", () => {
    const app = new Logger('test', { timestamp: false });
    const logged = vi.spyOn(app, 'log').mockImplementation(() => undefined);
    const warned = vi.spyOn(app, 'warn').mockImplementation(() => undefined);
    // As an app's `logger: ['error', 'warn']` (Nest's console logger with those levels); put back after.
    const before = Reflect.get(Logger, 'staticInstanceRef') as LoggerService | undefined;
    const levels = Reflect.get(Logger, 'logLevels') as LogLevel[] | undefined;
    Logger.overrideLogger(new ConsoleLogger({ logLevels: ['error', 'warn'] }));
    try {
      const logger = new ItemLogger(app, 3);
      logger.log('quiet');
      logger.warn('loud');
      expect(logger.kept.lines.map((line) => [line.level, line.message])).toEqual([
        ['log', 'quiet'],
        ['warn', 'loud'],
      ]);
      expect(logged).not.toHaveBeenCalled();
      expect(warned).toHaveBeenCalledWith('item 3: loud');
    } finally {
      Logger.overrideLogger(before ?? false);
      if (levels) Logger.overrideLogger(levels);
    }
  });
});

describe("an item's attempt", () => {
  it('has its kept lines written by the time it completes, so that their strings do not outlive it', async () => {
    const book = new ExecutionLog();
    const pendingAtCompletion: number[] = [];
    const report = {
      itemStarted: (_source: unknown, _taskId: unknown, _item: unknown, _at: unknown, id: string | undefined) => ({
        id,
      }),
      itemCompleted: (started: { id: string }) => {
        const kept: unknown = Reflect.get(book, 'linesById').get(started.id);
        pendingAtCompletion.push((Reflect.get(kept as object, 'pending') as string[]).length);
      },
    } as unknown as FiringReport;
    const ctx = { jobName: 'nightly', logger: new Logger('nightly') } as unknown as JobContext;
    Logger.overrideLogger(false);
    try {
      const failed = await runAttempts(
        ctx,
        report,
        NO_ITEM_POLICIES,
        book,
        { jobName: 'nightly', taskId: 't', shardingTotalCount: 1, shardingItem: 0 } as never,
        new RunningItem(),
        { source: 'cron', taskId: 't', scheduledAt: undefined } as never,
        (context) => {
          for (let i = 0; i < 3; i++) context.logger.log(`line ${i}`);
          return Promise.resolve();
        },
        () => undefined,
      );
      expect(failed).toBeUndefined();
    } finally {
      Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose', 'fatal']);
    }
    expect(pendingAtCompletion).toEqual([0]);
  });
});
