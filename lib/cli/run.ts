import type { Writable } from 'node:stream';
import { describeError } from '../errors/elastic-job.errors.js';
import { ElasticJobOperator } from '../lifecycle/elastic-job-operator.js';
import type { ZookeeperRegistryCenter } from '../registry/zookeeper-registry-center.js';
import { type CliInvocation, parseCommandLine } from './arguments.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError } from './cli-errors.js';
import type { CommandContext, CommandOutput } from './commands/command.js';
import { connectRegistry } from './connection.js';
import { CliOutput } from './output.js';
import { PROGRAM, usage } from './usage.js';

export interface CliEnvironment {
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
}

/** Runs one command line; resolves with the exit code (0 done, 1 the operation failed, 2 bad usage). */
export async function runCli(argv: readonly string[], environment: CliEnvironment): Promise<number> {
  const output = new CliOutput(environment.stdout, environment.stderr);
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
    await output.out(render(await invocation.command.run(context), invocation.json));
    return EXIT_OK;
  } catch (error) {
    await output.err(`${PROGRAM}: ${describeError(error)}\n`);
    return EXIT_FAILED;
  } finally {
    await registry?.close();
  }
}

/** `--json`: the API's value, one document; else the command's text. */
function render(result: CommandOutput, json: boolean): string {
  return json ? `${JSON.stringify(result.json, null, 2)}\n` : result.human;
}
