import type { CliCommand } from './command.js';
import { configCommand } from './config.command.js';
import { dumpCommand } from './dump.command.js';
import {
  disableCommand,
  disableItemCommand,
  enableCommand,
  enableItemCommand,
  removeCommand,
  removeJobCommand,
  rerunItemCommand,
  shutdownCommand,
  triggerCommand,
} from './operate.commands.js';
import { jobCommand, jobsCommand, serversCommand, shardingCommand } from './statistics.commands.js';
import {
  workflowCancelCommand,
  workflowRerunCommand,
  workflowRunsCommand,
  workflowTriggerCommand,
  workflowsCommand,
} from './workflow.commands.js';

/** Every command, in the order the usage text lists them. */
export const COMMANDS: readonly CliCommand[] = [
  jobsCommand,
  jobCommand,
  serversCommand,
  shardingCommand,
  triggerCommand,
  disableCommand,
  enableCommand,
  disableItemCommand,
  enableItemCommand,
  rerunItemCommand,
  shutdownCommand,
  removeCommand,
  removeJobCommand,
  configCommand,
  dumpCommand,
  workflowTriggerCommand,
  workflowRunsCommand,
  workflowRerunCommand,
  workflowCancelCommand,
  workflowsCommand,
];
