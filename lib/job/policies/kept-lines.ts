import type { ExecutionLine, ExecutionLines } from '../../interfaces/execution-history.interface.js';

/**
 * The bounds of one execution's kept lines (XXL-JOB keeps a whole file; here memory and the ZooKeeper reply that carries
 * them are the limit): 300 lines, 32 KB of text, each line cut at 2,000 characters.
 */
export const MAX_ITEM_LOG_LINES = 300;
export const MAX_ITEM_LOG_BYTES = 32 * 1024;
export const MAX_ITEM_LOG_LINE_CHARACTERS = 2000;

const LEVELS: ReadonlyArray<ExecutionLine['level']> = ['log', 'error', 'warn', 'debug', 'verbose', 'fatal'];
const LEVEL_CODES: Readonly<Record<ExecutionLine['level'], number>> = {
  log: 0,
  error: 1,
  warn: 2,
  debug: 3,
  verbose: 4,
  fatal: 5,
};
/** The most UTF-8 bytes one UTF-16 code unit takes (a pair of surrogates takes 4 for its 2 units). */
const MAX_BYTES_PER_UNIT = 3;
/** Never written: shared until a logger's first line is compacted (most items log none). */
const NO_TEXT = Buffer.alloc(0);
/** A UTF-16 high (leading) surrogate. */
const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
/** A line's packed number (KeptLines.meta): level in 3 bits, text end in 16, time offset above. */
const END_LIMIT = 2 ** 16;
const TIME_UNIT = 8 * END_LIMIT;
const MAX_TIME_OFFSET = 2 ** 34 - 1;

/**
 * One execution's kept lines, stored compactly: their text as UTF-8 in one buffer (a slice of Node's pool), their
 * times, levels and ends in one array of numbers. An object and a string per line, alive for the whole execution (and
 * past it in the execution log), is what made 100 lines an item cost a burst most: the garbage collector copied each
 * of them out of the young generation (issue 41's bench, `itemLogs`).
 *
 * Writing is deferred: `add` only checks the bounds, pushes the line's string and its time and level, which costs a
 * burst's handlers less than a disabled Nest Logger call does (bench/micro/item-logs-cpu.ts: a Buffer.write per line,
 * a call into C++, was most of what keeping cost; a buffer per execution grown to 8 KB, outside Node's pool, much of
 * the rest; the text kept as a string on the heap cost the young generation's collections twice what this does).
 * `compact` writes the pending lines in one Buffer.write of their join, into a buffer of their exact size; the executor
 * calls it at the attempt's end, so that the lines' strings die young, and every read calls it first, so that a
 * running item's lines are all seen. The 32 KB bound is counted in UTF-8 bytes and stays exact: while the lines surely
 * fit (their UTF-16 length × 3) nothing is measured; past that the pending lines are written first, and their bytes
 * counted: once for their join when it is all ASCII (one byte per unit), else line by line (Buffer.byteLength).
 */
export class KeptLines implements ExecutionLines {
  /** Lines logged past the bounds: counted, not kept. */
  dropped = 0;
  /** Lines kept: written ones, then pending ones. */
  private count = 0;
  /** The written lines' text as UTF-8, and its length (exact). */
  private text: Buffer = NO_TEXT;
  private bytes = 0;
  /** Lines kept but not yet written, and their UTF-16 length. */
  private pending: string[] = [];
  private pendingUnits = 0;
  /** The first line's time (epoch ms): each line's is kept as its distance from it. */
  private firstAt = 0;
  /**
   * Per line, one number (an array of doubles, one heap object however many lines): its time less `firstAt` × 2^19,
   * plus the end of its text in `text` × 8 (at most 32 KB, under 2^16; 0 while pending), plus its level's code. Exact
   * from the first line's time up to 2^34 ms (199 days) after it; a line outside that (the clock set back, or a later
   * line) carries the nearest time inside.
   */
  private readonly meta: number[] = [];

  /** Keeps one line (cut at MAX_ITEM_LOG_LINE_CHARACTERS), or counts it when past a bound. */
  add(level: ExecutionLine['level'], message: string): void {
    if (this.count >= MAX_ITEM_LOG_LINES) {
      this.dropped++;
      return;
    }
    const line =
      message.length > MAX_ITEM_LOG_LINE_CHARACTERS ? message.slice(0, MAX_ITEM_LOG_LINE_CHARACTERS) : message;
    if (this.bytes + (this.pendingUnits + line.length) * MAX_BYTES_PER_UNIT > MAX_ITEM_LOG_BYTES) {
      // Near the bound: the pending lines are written (their bytes then exact), and this line measured if need be.
      this.compact();
      const room = MAX_ITEM_LOG_BYTES - this.bytes;
      if (line.length * MAX_BYTES_PER_UNIT > room && Buffer.byteLength(line, 'utf8') > room) {
        this.dropped++;
        return;
      }
    }
    this.pending.push(line);
    this.pendingUnits += line.length;
    const at = Date.now();
    if (this.count === 0) this.firstAt = at;
    this.meta.push(Math.min(Math.max(at - this.firstAt, 0), MAX_TIME_OFFSET) * TIME_UNIT + LEVEL_CODES[level]);
    this.count++;
  }

  /** Writes the pending lines into the text buffer (see the class). */
  compact(): void {
    const pending = this.pending;
    if (pending.length === 0) return;
    const joined = pending.join('');
    let bytes = Buffer.byteLength(joined, 'utf8');
    const ascii = bytes === joined.length;
    let paired = false;
    if (!ascii) {
      bytes = 0;
      for (let index = 0; index < pending.length; index++) {
        const line = pending[index]!;
        bytes += Buffer.byteLength(line, 'utf8');
        // A high surrogate ending a line would pair with a low one starting the next in the join: written alone.
        paired ||= index < pending.length - 1 && isHighSurrogate(line.charCodeAt(line.length - 1));
      }
    }
    // From Node's pool (a buffer under 4 KB is a slice of a shared 8 KB one): no allocation outside the heap each.
    const text = Buffer.allocUnsafe(this.bytes + bytes);
    this.text.copy(text, 0, 0, this.bytes);
    if (ascii) text.write(joined, this.bytes, 'latin1');
    else if (!paired) text.write(joined, this.bytes, 'utf8');
    let end = this.bytes;
    let slot = this.count - pending.length;
    for (const line of pending) {
      const lineBytes = ascii ? line.length : Buffer.byteLength(line, 'utf8');
      if (paired) text.write(line, end, 'utf8');
      end += lineBytes;
      this.meta[slot] = this.meta[slot]! + end * 8;
      slot++;
    }
    this.text = text;
    this.bytes = end;
    this.pending = [];
    this.pendingUnits = 0;
  }

  /** The lines kept so far (a running item's pending ones written first), built now: a new array each read. */
  get lines(): ExecutionLine[] {
    this.compact();
    const lines: ExecutionLine[] = [];
    let start = 0;
    for (let index = 0; index < this.count; index++) {
      const packed = this.meta[index]!;
      const end = Math.floor(packed / 8) % END_LIMIT;
      lines.push({
        at: this.firstAt + Math.floor(packed / TIME_UNIT),
        level: LEVELS[packed % 8]!,
        message: this.text.toString('utf8', start, end),
      });
      start = end;
    }
    return lines;
  }

  /** How many lines are kept (without building them). */
  get size(): number {
    return this.count;
  }
}
