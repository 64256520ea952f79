import type { ElasticJobOperator } from '../../lifecycle/elastic-job-operator.js';
import type { OperatedNode } from '../../lifecycle/job-operate.api.js';
import type { OperationTarget } from '../../lifecycle/lifecycle.types.js';
import { quoteInput } from '../../errors/elastic-job.errors.js';
import { UsageError } from './cli-errors.js';
import { formatTable, NONE } from '../format/table.js';
import type { CliCommand, CommandInput } from './command.js';

/** Writes: ElasticJob's JobOperateAPI and ShardingOperateAPI, and the job's removal (JobConfigurationAPI). */

export const triggerCommand: CliCommand = {
  name: 'trigger',
  synopsis: '<name> [--param P]',
  summary: 'fires the job now, once, on every online instance (with a job parameter for that run)',
  arity: [1, 1],
  options: ['param'],
  async run({ operator, args, param }) {
    const jobName = args[0]!;
    const instances = await operator.trigger(jobName, param === undefined ? {} : { jobParameter: param });
    const human =
      instances.length === 0
        ? `Job '${jobName}' has no instance online: nothing triggered.\n`
        : `Triggered job '${jobName}' on ${count(instances.length, 'instance')}:\n` +
          formatTable(
            ['INSTANCE'],
            instances.map((id) => [id]),
          );
    return { json: instances, human };
  },
};

/** A job on every server, a server (`--ip`) in every job, or one job on one server: as ElasticJob takes them. */
function target({ args, ip }: CommandInput): OperationTarget {
  return { ...(args[0] === undefined ? {} : { jobName: args[0] }), ...(ip === undefined ? {} : { serverIp: ip }) };
}

function describeTarget({ jobName, serverIp }: OperationTarget): string {
  if (jobName !== undefined && serverIp !== undefined) return `job '${jobName}' on server ${serverIp}`;
  return jobName !== undefined ? `job '${jobName}'` : `server ${serverIp!}`;
}

function requireTarget(input: CommandInput): void {
  if (input.args.length === 0 && input.ip === undefined)
    throw new UsageError('name a job, a server (--ip IP), or both');
}

/** The nodes an operation wrote or deleted: `servers/{ip}` rows, and `instances/{id}` rows with their id. */
function nodesTable(nodes: readonly OperatedNode[]): string {
  if (nodes.every((node) => node.instanceId === undefined))
    return formatTable(
      ['JOB', 'SERVER'],
      nodes.map((node) => [node.jobName, node.serverIp]),
    );
  return formatTable(
    ['JOB', 'SERVER', 'INSTANCE'],
    nodes.map((node) => [node.jobName, node.serverIp, node.instanceId ?? NONE]),
  );
}

interface TargetOperation {
  name: 'disable' | 'enable' | 'shutdown' | 'remove';
  /** The name as a verb, for `Nothing to shut down`. */
  verb: string;
  summary: string;
  /** What was done, for `Disabled 2 server nodes of job 'x':`. */
  done(nodes: readonly OperatedNode[]): string;
  /** Why nothing was done. */
  nothing: string;
  apply(operator: ElasticJobOperator, target: OperationTarget): Promise<OperatedNode[]>;
}

function targetCommand(operation: TargetOperation): CliCommand {
  return {
    name: operation.name,
    synopsis: '[<name>] [--ip IP]',
    summary: operation.summary,
    arity: [0, 1],
    options: ['ip'],
    check: requireTarget,
    async run(context) {
      const chosen = target(context);
      const nodes = await operation.apply(context.operator, chosen);
      const human =
        nodes.length === 0
          ? `Nothing to ${operation.verb} for ${describeTarget(chosen)}: ${operation.nothing}.\n`
          : `${operation.done(nodes)} for ${describeTarget(chosen)}:\n${nodesTable(nodes)}`;
      return { json: nodes, human };
    },
  };
}

const serverNodes = (nodes: readonly OperatedNode[]): number => nodes.filter((n) => n.instanceId === undefined).length;
const instanceNodes = (nodes: readonly OperatedNode[]): number => nodes.length - serverNodes(nodes);

export const disableCommand = targetCommand({
  name: 'disable',
  verb: 'disable',
  summary: 'the server takes no items (servers/{ip} = DISABLED); reshards',
  done: (nodes) => `Disabled ${count(nodes.length, 'server node')}`,
  nothing: 'no server node matches',
  apply: (operator, chosen) => operator.disable(chosen),
});

export const enableCommand = targetCommand({
  name: 'enable',
  verb: 'enable',
  summary: 'the server takes items again (servers/{ip} = ENABLED)',
  done: (nodes) => `Enabled ${count(nodes.length, 'server node')}`,
  nothing: 'no server node matches',
  apply: (operator, chosen) => operator.enable(chosen),
});

export const shutdownCommand = targetCommand({
  name: 'shutdown',
  verb: 'shut down',
  summary: 'the instances stop the job, peers take its items (instances/{id} deleted)',
  done: (nodes) => `Shut down ${count(nodes.length, 'instance')}`,
  nothing: 'no online instance matches',
  apply: (operator, chosen) => operator.shutdown(chosen),
});

export const removeCommand = targetCommand({
  name: 'remove',
  verb: 'remove',
  summary: 'shutdown, and the servers/{ip} nodes deleted; the job stays',
  done: (nodes) =>
    `Shut down ${count(instanceNodes(nodes), 'instance')} and removed ${count(serverNodes(nodes), 'server node')}`,
  nothing: 'no instance or server node matches',
  apply: (operator, chosen) => operator.remove(chosen),
});

/** An item number: a non-negative integer as written (the API checks it against shardingTotalCount). */
function checkItem({ args }: CommandInput): void {
  if (!/^\d+$/.test(args[1]!) || !Number.isSafeInteger(Number(args[1])))
    throw new UsageError(`<item> must be an item number (0, 1, ...), got ${quoteInput(args[1])}`);
}

export const disableItemCommand: CliCommand = {
  name: 'disable-item',
  synopsis: '<name> <item>',
  summary: 'the item runs nowhere until enabled (sharding/{item}/disabled)',
  arity: [2, 2],
  options: [],
  check: checkItem,
  async run({ operator, args }) {
    await operator.disableItem(args[0]!, Number(args[1]));
    return { json: null, human: `Disabled item ${args[1]!} of job '${args[0]!}': it runs nowhere until enabled.\n` };
  },
};

export const enableItemCommand: CliCommand = {
  name: 'enable-item',
  synopsis: '<name> <item>',
  summary: 'the item runs again from its next firing',
  arity: [2, 2],
  options: [],
  check: checkItem,
  async run({ operator, args }) {
    await operator.enableItem(args[0]!, Number(args[1]));
    return { json: null, human: `Enabled item ${args[1]!} of job '${args[0]!}'.\n` };
  },
};

export const rerunItemCommand: CliCommand = {
  name: 'rerun-item',
  synopsis: '<name> <item>',
  summary: 'the item runs again now on its owner (rerun/{instanceId})',
  arity: [2, 2],
  options: [],
  check: checkItem,
  async run({ operator, args }) {
    const asked = await operator.rerunItem(args[0]!, Number(args[1]));
    return {
      json: asked,
      human: `Asked ${asked.instanceId} to run item ${asked.item} of job '${asked.jobName}' again now.\n`,
    };
  },
};

export const removeJobCommand: CliCommand = {
  name: 'remove-job',
  synopsis: '<name>',
  summary: "deletes the job's whole tree, config included; instances stop it",
  arity: [1, 1],
  options: [],
  async run({ operator, args }) {
    await operator.removeJob(args[0]!);
    return { json: null, human: `Removed job '${args[0]!}': its whole tree is deleted.\n` };
  },
};

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
