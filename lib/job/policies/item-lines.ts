import { Logger, type LoggerService, type LogLevel } from '@nestjs/common';
import type { ItemProgress } from '../../interfaces/sharding-context.interface.js';

import type { ExecutionLine, ExecutionLines } from '../../interfaces/execution-history.interface.js';
import { KeptLines } from './kept-lines.js';

export type ItemLogLine = ExecutionLine;
export type ItemLogLines = ExecutionLines;

export { MAX_ITEM_LOG_BYTES, MAX_ITEM_LOG_LINE_CHARACTERS, MAX_ITEM_LOG_LINES } from './kept-lines.js';

/** Where the lines of executions are kept (the in-memory execution log, tracing/execution-log.ts), by execution id. */
export interface ItemLineBook {
  keepLines(executionId: string, lines: ItemLogLines): void;
}

function text(message: unknown): string {
  if (typeof message === 'string') return message;
  if (message instanceof Error) return message.stack ?? `${message.name}: ${message.message}`;
  try {
    return JSON.stringify(message) ?? String(message);
  } catch {
    return String(message);
  }
}

/**
 * The item's `context.logger`: each line goes to the app's logger under the job's name, as the job's own lines do, and
 * is kept, bounded, with the execution (its lines array is what the execution log holds: kept lines appear there as
 * they are logged, so a running item's lines can be read).
 */
export class ItemLogger implements LoggerService {
  /** Its kept lines (kept-lines.ts: compact, the structured form built when read). */
  readonly kept = new KeptLines();

  constructor(
    private readonly appLogger: Logger,
    private readonly item: number,
  ) {}

  log(message: unknown, ...optional: unknown[]): void {
    this.forward('log', message, optional);
    this.keep('log', message);
  }
  error(message: unknown, ...optional: unknown[]): void {
    this.forward('error', message, optional);
    this.keep('error', message);
  }
  warn(message: unknown, ...optional: unknown[]): void {
    this.forward('warn', message, optional);
    this.keep('warn', message);
  }
  debug(message: unknown, ...optional: unknown[]): void {
    this.forward('debug', message, optional);
    this.keep('debug', message);
  }
  verbose(message: unknown, ...optional: unknown[]): void {
    this.forward('verbose', message, optional);
    this.keep('verbose', message);
  }
  fatal(message: unknown, ...optional: unknown[]): void {
    this.forward('fatal', message, optional);
    this.keep('fatal', message);
  }

  /**
   * The item's attempt ended: its kept lines are written into their compact form now, so that the strings die young
   * (kept-lines.ts). A line logged after (an abandoned attempt's code still running) is kept as before, written when read.
   */
  end(): void {
    this.kept.compact();
  }

  /**
   * To the app's logger, unless Nest says its level is off (`logger: ['error', 'warn']`): a line it would drop is not
   * formatted nor passed down Nest's Logger, most of what a line cost (issue 41's bench: 100 lines an item in a burst).
   */
  private forward(level: LogLevel, message: unknown, optional: unknown[]): void {
    if (!Logger.isLevelEnabled(level)) return;
    this.appLogger[level](`item ${this.item}: ${text(message)}`, ...optional);
  }

  private keep(level: ItemLogLine['level'], message: unknown): void {
    this.kept.add(level, text(message));
  }
}

/** The most fields of a progress object, and its largest JSON. */
const MAX_PROGRESS_FIELDS = 16;
const MAX_PROGRESS_BYTES = 1024;

/** A progress value checked (a TypeError saying what is wrong), copied so that the item may change its own later. */
export function checkedProgress(value: unknown): ItemProgress {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`reportProgress takes a finite number, got ${String(value)}`);
    return value;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new TypeError('reportProgress takes a number or an object of numbers, strings and booleans');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_PROGRESS_FIELDS)
    throw new TypeError(`reportProgress takes at most ${MAX_PROGRESS_FIELDS} fields, got ${entries.length}`);
  for (const [key, field] of entries)
    if (
      typeof field !== 'string' &&
      typeof field !== 'boolean' &&
      (typeof field !== 'number' || !Number.isFinite(field))
    )
      throw new TypeError(`reportProgress: field '${key}' must be a finite number, a string or a boolean`);
  const copy = Object.fromEntries(entries) as Record<string, number | string | boolean>;
  const bytes = Buffer.byteLength(JSON.stringify(copy), 'utf8');
  if (bytes > MAX_PROGRESS_BYTES)
    throw new TypeError(`reportProgress takes at most ${MAX_PROGRESS_BYTES} bytes of JSON, got ${bytes}`);
  return copy;
}
