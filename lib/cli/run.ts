import type { Writable } from 'node:stream';
import { describeError } from '../errors/elastic-job.errors.js';
import { ELASTIC_JOB_ERROR_CODES, errorCodeOf } from '../errors/error-payload.js';
import { ElasticJobOperator } from '../lifecycle/elastic-job-operator.js';
import type { ZookeeperRegistryCenter } from '../registry/zookeeper-registry-center.js';
import { type CliInvocation, parseCommandLine } from './arguments.js';
import { EXIT_OK, EXIT_USAGE, UsageError } from './commands/cli-errors.js';
import type { CommandContext, CommandOutput } from './commands/command.js';
import { connectRegistry } from './connection.js';
import { runCronPreview } from './cron-preview.command.js';
import { runLocalZookeeper } from './local-zookeeper.command.js';
import { CliOutput } from './output.js';
import { PROGRAM, usage } from './usage.js';
import { untilInterrupted, watchAndRedraw } from './watch.js';

export interface CliEnvironment {
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable;
  env: NodeJS.ProcessEnv;
}

/** Runs one command line; resolves with the exit code (cli-errors.ts: 0 done, 1 failed, 2 bad usage, 3 not found). */
export async function runCli(argv: readonly string[], environment: CliEnvironment): Promise<number> {
  const output = new CliOutput(environment.stdout, environment.stderr);
  if (argv[0] === 'zookeeper') return runLocalZookeeper(argv.slice(1), output, untilInterrupted);
  if (argv[0] === 'cron') return runCronPreview(argv.slice(1), output);
  let invocation: CliInvocation;
  try {
    const parsed = parseCommandLine(argv, environment.env);
    if (parsed.help) {
      await output.out(usage());
      return EXIT_OK;
    }
    invocation = parsed.invocation;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    await output.err(`${PROGRAM}: ${error.message}\n\n${usage()}`);
    return EXIT_USAGE;
  }
  let registry: ZookeeperRegistryCenter | undefined;
  try {
    registry = await connectRegistry(invocation.zookeeper);
    const context: CommandContext = {
      ...invocation.input,
      namespace: registry.namespace,
      operator: ElasticJobOperator.over(registry),
      registry,
    };
    if (invocation.watch) await watch(invocation, context, registry, output);
    else await output.out(render(await invocation.command.run(context), invocation.json, false));
    return EXIT_OK;
  } catch (error) {
    await output.err(`${PROGRAM}: ${describeError(error)}\n`);
    return exitCodeOf(error);
  } finally {
    await registry?.close();
  }
}

/**
 * The exit code of a failed operation: the code its error has on every surface (errors/error-payload.ts): 2 for a bad
 * argument, 3 for a job or server that is not there, 1 for anything else (ZooKeeper trouble, a conflict).
 */
export function exitCodeOf(error: unknown): number {
  return ELASTIC_JOB_ERROR_CODES[errorCodeOf(error)].cliExit;
}

/** `--json`: the API's value, one document (one line per redraw in watch mode); else the command's text. */
function render(result: CommandOutput, json: boolean, oneLine: boolean): string {
  if (!json) return result.human;
  return `${oneLine ? JSON.stringify(result.json) : JSON.stringify(result.json, null, 2)}\n`;
}

/** Redraws the command's output on every change that alters it: in place on a terminal, appended otherwise. */
async function watch(
  invocation: CliInvocation,
  context: CommandContext,
  registry: ZookeeperRegistryCenter,
  output: CliOutput,
): Promise<void> {
  const { command, input, json } = invocation;
  let last: string | undefined;
  await watchAndRedraw({
    registry,
    root: command.watchRoot!(input),
    stopped: untilInterrupted(),
    notice: (message) => output.err(`${PROGRAM}: ${message}\n`),
    draw: async () => {
      const text = render(await command.run(context), json, true);
      if (text === last) return;
      const first = last === undefined;
      last = text;
      if (json) await output.out(text);
      else if (output.isTerminal)
        await output.out(
          `\u001b[H\u001b[2J${PROGRAM} ${command.name} in ${context.namespace} at ${new Date().toLocaleTimeString()}` +
            ` (Ctrl-C to stop)\n\n${text}`,
        );
      else await output.out(first ? text : `\n${text}`);
    },
  });
}
