import type { ElasticJobOperator } from '../../lifecycle/elastic-job-operator.js';
import type { RegistryReads } from '../../registry/registry-center.js';

/** What a command takes from the command line, besides the connection flags. */
export interface CommandInput {
  /** Positional arguments after the command's name. */
  readonly args: readonly string[];
  /** `--ip`: a server's IP. */
  readonly ip: string | undefined;
  /** `--param`: the job parameter of a triggered run. */
  readonly param?: string | undefined;
  /** `--set key=value`, in the order given. */
  readonly sets: readonly string[];
}

export interface CommandContext extends CommandInput {
  readonly namespace: string;
  readonly operator: ElasticJobOperator;
  /** Straight reads, for what the operator API has no call for (the tree dump). */
  readonly registry: RegistryReads;
}

/** A command's result both ways: `json` is exactly what the API returned, `human` the text for a terminal. */
export interface CommandOutput {
  readonly json: unknown;
  readonly human: string;
}

/** Options that only some commands take. */
export type CommandOption = 'ip' | 'param' | 'set' | 'watch';

export interface CliCommand {
  readonly name: string;
  /** What follows the name, for the usage text: `<name> [--ip IP]`. */
  readonly synopsis: string;
  readonly summary: string;
  /** How many positional arguments it takes: at least, at most. */
  readonly arity: readonly [min: number, max: number];
  readonly options: readonly CommandOption[];
  /** Checks beyond the counts, before connecting; throws a UsageError. */
  check?(input: CommandInput): void;
  /** For `--watch`: the namespace-relative subtree whose changes redraw the output. */
  watchRoot?(input: CommandInput): string;
  run(context: CommandContext): Promise<CommandOutput>;
}
