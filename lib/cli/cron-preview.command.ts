import { parseArgs } from 'node:util';
import { CronExpressionError, describeError } from '../errors/elastic-job.errors.js';
import { describeCron, displayZone, formatFireTime } from '../schedule/cron-preview.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE } from './commands/cli-errors.js';
import type { CliOutput } from './output.js';
import { PROGRAM } from './usage.js';

export const CRON_PREVIEW_USAGE = `Usage: ${PROGRAM} cron '<expression>' [--zone ZONE] [--count N] [--json]

Checks a cron as @ShardedJob({ cron }) does and prints the form stored for Java instances (Quartz's dialect) and
its next N fire times (default 5) in the zone (default the process's). Needs no ZooKeeper.
`;

/** `cron '<expression>'`: what a cron means here, before it is given to a job (exit 1 when a job would refuse it). */
export async function runCronPreview(argv: readonly string[], output: CliOutput): Promise<number> {
  let cron: string;
  let zone: string | undefined;
  let count: number;
  let json: boolean;
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: { zone: { type: 'string' }, count: { type: 'string' }, json: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length !== 1)
      throw new Error(`cron takes one expression, quoted (got ${positionals.length} arguments)`);
    cron = positionals[0]!;
    zone = values.zone;
    count = values.count === undefined ? 5 : Number(values.count);
    if (!Number.isInteger(count) || count < 1 || count > 100)
      throw new Error(`--count takes 1..100, got '${values.count}'`);
    json = values.json === true;
  } catch (error) {
    await output.err(`${PROGRAM}: ${describeError(error)}\n\n${CRON_PREVIEW_USAGE}`);
    return EXIT_USAGE;
  }
  try {
    const description = describeCron(cron, { ...(zone === undefined ? {} : { timeZone: zone }), count });
    await output.out(
      json
        ? `${JSON.stringify(description, null, 2)}\n`
        : `cron        ${description.cron}\nstored as   ${description.quartz}\nnext firings\n` +
            description.nextFireTimes
              .map((time) => `  ${formatFireTime(time, description.timeZone)}  ${displayZone(description.timeZone)}\n`)
              .join(''),
    );
    return EXIT_OK;
  } catch (error) {
    if (!(error instanceof CronExpressionError)) throw error;
    await output.err(`${PROGRAM}: ${error.message}\n`);
    return EXIT_FAILED;
  }
}
