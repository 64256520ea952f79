import { Logger } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import type { JobErrorHandler, JobShardingStrategy } from '../../lib/interfaces/sharded-job-options.interface.js';
import { JobPlugins } from '../../lib/job/plugins/job-plugins.js';
import { AVG_ALLOCATION, ROUND_ROBIN } from '../../lib/job/plugins/sharding-strategies.js';

const strategy = (type: string): JobShardingStrategy => ({ type, sharding: () => new Map() });
const errorHandler = (type: string): JobErrorHandler => ({ type, handleException: () => undefined });
const logger = new Logger('test');

describe('JobPlugins', () => {
  it('finds the built-ins by their ElasticJob names, and nothing under an inherited name', () => {
    const plugins = new JobPlugins(logger, {}, () => undefined);
    expect(plugins.strategy('AVG_ALLOCATION')).toBe(AVG_ALLOCATION);
    expect(plugins.strategy('ROUND_ROBIN')).toBe(ROUND_ROBIN);
    expect(plugins.errorHandler('THROW')?.type).toBe('THROW');
    expect(plugins.itemExecutor('SIMPLE')).toBeDefined();
    for (const inherited of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(plugins.strategy(inherited)).toBeUndefined();
      expect(plugins.errorHandler(inherited)).toBeUndefined();
      expect(plugins.itemExecutor(inherited)).toBeUndefined();
    }
    expect(plugins.strategy('NOPE')).toBeUndefined();
  });

  it('makes a built-in handler and executor once and gives the same one after', () => {
    const plugins = new JobPlugins(logger, {}, () => undefined);
    expect(plugins.errorHandler('LOG')).toBe(plugins.errorHandler('LOG'));
    expect(plugins.itemExecutor('SIMPLE')).toBe(plugins.itemExecutor('SIMPLE'));
    expect(new JobPlugins(logger, {}).itemExecutor('SIMPLE')).toBeUndefined(); // no method, no executor
  });

  it("custom plugins win over a built-in of the same type, and the job's own over an app's provider", () => {
    const providedLog = errorHandler('LOG');
    const providedMine = strategy('MINE');
    const ownMine = strategy('MINE');
    const plugins = new JobPlugins(logger, {
      providedStrategies: [providedMine, strategy('ROUND_ROBIN')],
      providedErrorHandlers: [providedLog],
      strategy: ownMine,
    });
    expect(plugins.strategy('MINE')).toBe(ownMine);
    expect(plugins.strategy('ROUND_ROBIN')).not.toBe(ROUND_ROBIN);
    expect(plugins.strategy('AVG_ALLOCATION')).toBe(AVG_ALLOCATION);
    expect(plugins.errorHandler('LOG')).toBe(providedLog);
    expect(plugins.errorHandler('IGNORE')?.type).toBe('IGNORE');
    expect(plugins.names()).toEqual({
      strategies: ['AVG_ALLOCATION', 'ODEVITY', 'ROUND_ROBIN', 'MINE'],
      errorHandlers: ['LOG', 'THROW', 'IGNORE', 'EMAIL', 'WECHAT', 'DINGTALK', 'WEBHOOK'],
      itemExecutors: [],
    });
  });
});
