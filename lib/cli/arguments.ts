import { parseArgs } from 'node:util';
import { InvalidOperationError, JobConfigurationError, quoteInput } from '../errors/elastic-job.errors.js';
import type { ZookeeperConfiguration } from '../interfaces/module-options.interface.js';
import { checkJobName, checkJobParameter, checkServerIp } from '../lifecycle/operator-input.js';
import { validateZookeeperOptions } from '../registry/zookeeper-settings.js';
import { UsageError } from './commands/cli-errors.js';
import type { CliCommand, CommandInput, CommandOption } from './commands/command.js';
import { COMMANDS } from './commands/index.js';

/** A command line read and checked: what to run, where, and how to print it. */
export interface CliInvocation {
  readonly command: CliCommand;
  readonly input: CommandInput;
  readonly zookeeper: ZookeeperConfiguration;
  readonly json: boolean;
  readonly watch: boolean;
}

export type ParsedCommandLine = { readonly help: true } | { readonly help: false; readonly invocation: CliInvocation };

const OPTIONS = {
  zk: { type: 'string' },
  namespace: { type: 'string' },
  digest: { type: 'string' },
  timeout: { type: 'string' },
  json: { type: 'boolean' },
  ip: { type: 'string' },
  param: { type: 'string' },
  set: { type: 'string', multiple: true },
  watch: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The flags each of the ZooKeeper options comes from, to name them in messages. */
const FLAG_OF_FIELD: Readonly<Record<string, string>> = {
  'zookeeper.serverLists': '--zk',
  'zookeeper.namespace': '--namespace',
  'zookeeper.digest': '--digest',
  'zookeeper.connectionTimeoutMilliseconds': '--timeout',
};

/**
 * Reads the command line with Node's `util.parseArgs`; everything wrong with it is a UsageError (exit 2), found
 * before any connection is made. `--zk` falls back to `env.ZK_CONNECT`.
 */
export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): ParsedCommandLine {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help || positionals[0] === 'help') return { help: true };

  const [name, ...args] = positionals;
  if (name === undefined) throw new UsageError('no command given');
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (command === undefined)
    throw new UsageError(`unknown command ${quoteInput(name)}; commands: ${COMMANDS.map((c) => c.name).join(', ')}`);

  const given: Record<CommandOption, boolean> = {
    ip: values.ip !== undefined,
    param: values.param !== undefined,
    set: values.set !== undefined,
    watch: values.watch === true,
  };
  for (const option of Object.keys(given) as CommandOption[]) {
    if (given[option] && !command.options.includes(option))
      throw new UsageError(`--${option} does not apply to '${name}'; usage: ${name} ${command.synopsis}`);
  }
  const [min, max] = command.arity;
  if (args.length < min || args.length > max)
    throw new UsageError(
      `'${name}' takes ${min === max ? min : `${min} to ${max}`} argument${min === 1 && max === 1 ? '' : 's'}, got ` +
        `${args.length}; usage: ${name} ${command.synopsis}`.trimEnd(),
    );
  // The operator API's checks (operator-input.ts), before any connection: every command's first argument is a job's
  // name, --ip a server's IP, --param a job parameter.
  if (args[0] !== undefined) asUsage(() => checkJobName(args[0], name, '<name>'));
  if (values.ip !== undefined) asUsage(() => checkServerIp(values.ip, name, '--ip'));
  if (values.param !== undefined) asUsage(() => checkJobParameter(values.param, name, '--param'));
  const input: CommandInput = { args, ip: values.ip, param: values.param, sets: values.set ?? [] };
  command.check?.(input);

  return {
    help: false,
    invocation: {
      command,
      input,
      zookeeper: zookeeperOptions(values, env),
      json: values.json === true,
      watch: given.watch,
    },
  };
}

/** An InvalidOperationError of the operator's checks, said as the command line's mistake (exit 2, with usage). */
function asUsage(check: () => unknown): void {
  try {
    check();
  } catch (error) {
    if (!(error instanceof InvalidOperationError)) throw error;
    throw new UsageError(`${error.field} ${error.detail}`);
  }
}

function zookeeperOptions(
  values: { zk?: string; namespace?: string; digest?: string; timeout?: string },
  env: NodeJS.ProcessEnv,
): ZookeeperConfiguration {
  const serverLists = values.zk ?? (env.ZK_CONNECT || undefined);
  if (serverLists === undefined) throw new UsageError('--zk host:port[,...] is required (or set ZK_CONNECT)');
  if (values.namespace === undefined) throw new UsageError('--namespace is required: the namespace of the jobs');
  let timeout: number | undefined;
  if (values.timeout !== undefined) {
    if (!/^\d+$/.test(values.timeout) || Number(values.timeout) === 0)
      throw new UsageError(`--timeout takes milliseconds (an integer > 0), got ${quoteInput(values.timeout)}`);
    timeout = Number(values.timeout);
  }
  const zookeeper: ZookeeperConfiguration = {
    serverLists,
    namespace: values.namespace,
    ...(values.digest === undefined ? {} : { digest: values.digest }),
    ...(timeout === undefined ? {} : { connectionTimeoutMilliseconds: timeout }),
  };
  try {
    validateZookeeperOptions(zookeeper);
  } catch (error) {
    if (!(error instanceof JobConfigurationError)) throw error;
    throw new UsageError(`invalid ${FLAG_OF_FIELD[error.field] ?? error.field}: ${error.detail}`);
  }
  return zookeeper;
}
