import type { ItemProgress } from '../../interfaces/sharding-context.interface.js';
import type { JobBriefInfo } from '../../lifecycle/lifecycle.types.js';
import { formatTable, NONE } from '../format/table.js';
import type { CliCommand } from './command.js';
import { requireJob } from './job-lookup.js';

/** Reads: ElasticJob's JobStatisticsAPI, ServerStatisticsAPI and ShardingStatisticsAPI. */

function jobsTable(jobs: readonly JobBriefInfo[]): string {
  return formatTable(
    ['JOB', 'STATUS', 'CRON', 'INSTANCES', 'ITEMS', 'DESCRIPTION'],
    jobs.map((job) => [
      job.jobName,
      job.status,
      job.cron ?? NONE,
      String(job.instanceCount),
      String(job.shardingTotalCount),
      job.description,
    ]),
  );
}

export const jobsCommand: CliCommand = {
  name: 'jobs',
  synopsis: '[--ip IP] [--watch]',
  summary: 'every job: status, cron, instances online, items (--ip: those of one server)',
  arity: [0, 0],
  options: ['ip', 'watch'],
  watchRoot: () => '/',
  async run({ operator, namespace, ip }) {
    const jobs = ip === undefined ? await operator.getAllJobsBriefInfo() : await operator.getJobsBriefInfo(ip);
    const none = ip === undefined ? `No jobs in namespace '${namespace}'.\n` : `No jobs on server ${ip}.\n`;
    return { json: jobs, human: jobs.length === 0 ? none : jobsTable(jobs) };
  },
};

export const jobCommand: CliCommand = {
  name: 'job',
  synopsis: '<name>',
  summary: 'one job: status, cron, instances online, items',
  arity: [1, 1],
  options: [],
  async run(context) {
    const job = await requireJob(context, context.args[0]!);
    return { json: job, human: jobsTable([job]) };
  },
};

export const serversCommand: CliCommand = {
  name: 'servers',
  synopsis: '',
  summary: 'every server (IP): instances online, jobs, jobs it is disabled in',
  arity: [0, 0],
  options: [],
  async run({ operator, namespace }) {
    const servers = await operator.getAllServersBriefInfo();
    const human =
      servers.length === 0
        ? `No servers in namespace '${namespace}'.\n`
        : formatTable(
            ['SERVER', 'INSTANCES', 'JOBS', 'DISABLED'],
            servers.map((server) => [
              server.serverIp,
              String(server.instancesNum),
              String(server.jobsNum),
              String(server.disabledJobsNum),
            ]),
          );
    return { json: servers, human };
  },
};

export const shardingCommand: CliCommand = {
  name: 'sharding',
  synopsis: '<name> [--watch]',
  summary: "the job's items: status, server and instance, failover",
  arity: [1, 1],
  options: ['watch'],
  watchRoot: ({ args }) => `/${args[0]!}`,
  async run(context) {
    const jobName = context.args[0]!;
    // The running items' progress, asked of their instances (nothing is asked when none runs).
    const items = await context.operator.getShardingInfo(jobName, { progress: true, timeoutMs: 1000 });
    const progress = items.some((item) => item.progress !== undefined);
    const human =
      items.length === 0
        ? `Job '${jobName}' has no sharding yet: its leader shards it before its first firing.\n`
        : formatTable(
            ['ITEM', 'STATUS', 'SERVER', 'INSTANCE', 'FAILOVER', ...(progress ? ['PROGRESS'] : [])],
            items.map((item) => [
              String(item.item),
              item.status,
              item.serverIp ?? NONE,
              item.instanceId ?? NONE,
              item.failover ? 'yes' : 'no',
              ...(progress ? [item.progress ? describeProgress(item.progress.value) : NONE] : []),
            ]),
          );
    return { json: items, human };
  },
};

/** A progress as one cell: a number as it is, an object as `name=value` pairs. */
function describeProgress(value: ItemProgress): string {
  if (typeof value === 'number') return String(value);
  return Object.entries(value)
    .map(([name, field]) => `${name}=${String(field)}`)
    .join(' ');
}
