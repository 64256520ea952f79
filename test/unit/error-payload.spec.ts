import { describe, expect, it } from 'vitest';
import {
  DependencyUnavailableError,
  InvalidOperationError,
  JobNotFoundError,
  quoteInput,
  RegistryError,
  StoredConfigurationError,
} from '../../lib/errors/elastic-job.errors.js';
import { CLIENT_MESSAGE_LIMIT, errorPayload, isHiddenFromCaller } from '../../lib/errors/error-payload.js';

/** What a remote caller receives of a failure (issue 27): bounded, naming no other job, the same on every surface. */

describe('errorPayload', () => {
  it('gives the class, the code and the message of the library errors', () => {
    expect(errorPayload(new JobNotFoundError('nope'))).toEqual({
      name: 'JobNotFoundError',
      code: 'JOB_NOT_FOUND',
      message:
        "No job named 'nope' in this namespace (it has no config node): check the name and the namespace; the jobs " +
        'query lists the jobs there',
    });
    expect(
      errorPayload(new StoredConfigurationError('report', 'cron', 'the stored configuration is not YAML')),
    ).toEqual({
      name: 'StoredConfigurationError',
      code: 'INVALID_STORED_DATA',
      message: "Job 'report': invalid 'cron': the stored configuration is not YAML",
    });
    expect(errorPayload(new DependencyUnavailableError('the execution history', 'down')).code).toBe(
      'DEPENDENCY_UNAVAILABLE',
    );
    expect(errorPayload(new RegistryError('BAD_VERSION', '/report/config', "Job 'report': changed"))).toEqual({
      name: 'RegistryError',
      code: 'CONFLICT',
      message: "Job 'report': changed",
      registryCode: 'BAD_VERSION',
    });
  });

  it("hides what is not the library's, ZooKeeper's node paths and what is over the limit; says the log has it", () => {
    const foreign = new TypeError("Cannot read properties of undefined (reading 'secret')");
    expect(errorPayload(foreign)).toEqual({
      name: 'Error',
      code: 'INTERNAL',
      message: 'internal error: the service logged it',
    });
    expect(isHiddenFromCaller(foreign)).toBe(true);
    // An operation over every job of a server can fail on another job's node: its path is not sent.
    const denied = new RegistryError(
      'NO_AUTH',
      '/payroll/servers/10.0.0.1',
      'ZooKeeper NO_AUTH on /payroll/servers/10.0.0.1',
    );
    expect(errorPayload(denied)).toEqual({
      name: 'RegistryError',
      code: 'REGISTRY_ERROR',
      message: 'ZooKeeper answered NO_AUTH (the service logged the node)',
      registryCode: 'NO_AUTH',
    });
    expect(isHiddenFromCaller(denied)).toBe(true);
    const long = new InvalidOperationError('trigger', 'jobName', 'x'.repeat(5000));
    expect(errorPayload(long).message).toHaveLength(CLIENT_MESSAGE_LIMIT);
    expect(errorPayload(long).message.endsWith('…')).toBe(true);
    expect(isHiddenFromCaller(long)).toBe(true);
    expect(isHiddenFromCaller(new JobNotFoundError('nope'))).toBe(false);
  });
});

describe('quoteInput', () => {
  it('quotes at most 64 characters, says the length, escapes control characters, keeps pairs whole', () => {
    expect(quoteInput('report')).toBe("'report'");
    expect(quoteInput('a\u0000b\nc')).toBe("'a\\u0000b\\nc'");
    expect(quoteInput('it\'s "x"')).toBe("'it's \"x\"'");
    expect(quoteInput('x'.repeat(64))).toBe(`'${'x'.repeat(64)}'`);
    expect(quoteInput('x'.repeat(65))).toBe(`'${'x'.repeat(63)}…' (65 characters)`);
    // 62 characters, then an emoji (two UTF-16 units) across the cut: not split in half.
    expect(quoteInput(`${'x'.repeat(62)}📈tail`)).toBe(`'${'x'.repeat(62)}…' (68 characters)`);
    expect(quoteInput('lone\ud800')).toBe("'lone\\ud800'");
    expect([quoteInput(42), quoteInput(null), quoteInput(undefined), quoteInput(true)]).toEqual([
      '42',
      'null',
      'undefined',
      'true',
    ]);
    expect([quoteInput({}), quoteInput([1, 2]), quoteInput(() => 1), quoteInput(10n)]).toEqual([
      'an object',
      'an array of 2',
      'a function',
      '10n',
    ]);
  });
});
