import { formatFireTimes, upcomingFireTimes } from '../../schedule/cron-preview.js';
import type { JobConfiguration } from '../../job/config/job-configuration.js';
import { formatFields, NONE } from '../format/table.js';
import type { CliCommand } from './command.js';
import { parseConfigChanges } from './config-values.js';
import { JobNotFoundError } from '../../errors/elastic-job.errors.js';

/** ElasticJob's JobConfigurationAPI: the config node, read, or updated with `--set`. */

function fields(config: JobConfiguration): string {
  return formatFields(
    Object.entries(config).flatMap(([key, value]: [string, unknown]): Array<[string, string]> => {
      // A typed job's props, one line each (`props.http.uri`); nothing for a job that has none.
      if (key === 'props')
        return Object.entries(value as Record<string, string>).map(([name, prop]) => [`props.${name}`, prop]);
      return [[key, value === undefined ? NONE : String(value)]];
    }),
  );
}

export const configCommand: CliCommand = {
  name: 'config',
  synopsis: '<name> [--set key=value ...]',
  summary: "the job's configuration; --set changes fields (applied at once)",
  arity: [1, 1],
  options: ['set'],
  check: ({ sets }) => void parseConfigChanges(sets),
  async run(context) {
    const jobName = context.args[0]!;
    if (context.sets.length > 0) {
      const updated = await context.operator.updateJobConfiguration(jobName, parseConfigChanges(context.sets));
      const firings =
        updated.cron === ''
          ? ''
          : `next firings: ${formatFireTimes(upcomingFireTimes(updated.cron, updated.timeZone, 3, new Date()), updated.timeZone)}\n`;
      return { json: updated, human: `Updated the configuration of job '${jobName}':\n${fields(updated)}${firings}` };
    }
    const config = await context.operator.getJobConfiguration(jobName);
    if (config === undefined) throw new JobNotFoundError(jobName);
    return { json: config, human: fields(config) };
  },
};
