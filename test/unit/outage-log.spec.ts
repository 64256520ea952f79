import { Logger } from '@nestjs/common';
import { describe, expect, it, vi } from 'vitest';
import { DependencyUnavailableError } from '../../lib/errors/elastic-job.errors.js';
import { builtInErrorHandler } from '../../lib/job/plugins/job-error-handlers.js';
import { OUTAGE_REPORT_INTERVAL_MS, OutageLog } from '../../lib/util/outage-log.js';

/** A dependency away: a line when it goes, a count at most once a minute, a line when it is back (issue 27). */

function recorder() {
  const lines: string[] = [];
  return {
    lines,
    logger: {
      warn: (message: unknown) => void lines.push(`WARN ${String(message)}`),
      log: (message: unknown) => void lines.push(`LOG ${String(message)}`),
    },
  };
}

describe('OutageLog', () => {
  it('says an outage once, counts what failed, and says once that it is over', () => {
    const { lines, logger } = recorder();
    let now = 1_000_000;
    const outage = new OutageLog(logger, "client 'WORKERS'", 'item(s)', () => now);
    outage.recovered(); // nothing was away: nothing said
    expect(lines).toEqual([]);

    outage.failed(new Error('CONNECTION_REFUSED'), 'its items fail until it answers');
    for (let i = 0; i < 165; i++) {
      now += 20;
      outage.failed(new Error('CONNECTION_REFUSED'));
    }
    expect(outage.away).toBe(true);
    expect(lines).toEqual([
      "WARN client 'WORKERS' is unavailable: CONNECTION_REFUSED; its items fail until it answers (failures are " +
        'counted until it answers again)',
    ]);

    now += OUTAGE_REPORT_INTERVAL_MS;
    outage.failed('timed out');
    now += 1000;
    outage.failed('timed out'); // within the interval of the count just said
    expect(lines.slice(1)).toEqual([
      "WARN client 'WORKERS' still unavailable after 63.3 s: 167 item(s) failed so far (last: timed out)",
    ]);

    now += 300;
    outage.recovered('emitting again');
    outage.recovered();
    expect(lines.slice(2)).toEqual([
      "LOG client 'WORKERS' is available again after 64.6 s: 168 item(s) failed while it was away; emitting again",
    ]);
    expect(outage.away).toBe(false);

    // A second outage is counted from zero.
    outage.failed(new Error('gone again'));
    outage.recovered();
    expect(lines.slice(3)).toEqual([
      "WARN client 'WORKERS' is unavailable: gone again (failures are counted until it answers again)",
      "LOG client 'WORKERS' is available again after 0.0 s: 1 item(s) failed while it was away",
    ]);
  });
});

describe('the LOG error handler', () => {
  it("logs an item's failure with its stack, but a dependency's outage as one debug line", () => {
    const logger = new Logger('test');
    const error = vi.spyOn(logger, 'error').mockImplementation(() => undefined);
    const debug = vi.spyOn(logger, 'debug').mockImplementation(() => undefined);
    const handler = builtInErrorHandler('LOG', logger);
    const context = { shardingItem: 3 } as Parameters<typeof handler.handleException>[2];

    void handler.handleException('report', new Error('bad row'), context);
    expect(error.mock.calls).toHaveLength(1);
    expect(String(error.mock.calls[0]![0])).toMatch(/^Job 'report' item 3 failed: Error: bad row\n {4}at /);

    void handler.handleException(
      'report',
      new DependencyUnavailableError("client 'WORKERS'", "'report.build' for item 3 could not be sent: refused"),
      context,
    );
    expect(error.mock.calls).toHaveLength(1);
    expect(debug.mock.calls.map((call) => call[0])).toEqual([
      "Job 'report' item 3 failed: 'report.build' for item 3 could not be sent: refused",
    ]);
  });
});
