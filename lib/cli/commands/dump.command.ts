import { JobNodePath } from '../../job/paths.js';
import { dumpTree, formatDump } from '../format/tree-dump.js';
import type { CliCommand } from './command.js';
import { JobNotFoundError } from '../../errors/elastic-job.errors.js';
import { maskSecretsInConfigYaml } from '../../job/alerts/alert-props.js';

export const dumpCommand: CliCommand = {
  name: 'dump',
  synopsis: '[<name>]',
  summary: 'every node of the namespace, or of the job, with its value',
  arity: [0, 1],
  options: [],
  async run(context) {
    const jobName = context.args[0];
    const root = jobName === undefined ? '/' : new JobNodePath(jobName).root;
    // A job's root without a config node (half removed, or being set up) is still worth dumping.
    if (jobName !== undefined && (await context.registry.exists(root)) === undefined)
      throw new JobNotFoundError(jobName);
    // A config node's alert secrets (a password, a robot's token) are shown masked, as `config` shows them.
    const nodes = (await dumpTree(context.registry, root)).map((node) =>
      node.path.endsWith('/config') ? { ...node, value: maskSecretsInConfigYaml(node.value) } : node,
    );
    return { json: nodes, human: formatDump(nodes) };
  },
};
