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
/** First sizes: under Node's pooled-Buffer size (4 KB), and room for a few dozen lines before the first copy. */
const FIRST_TEXT_BYTES = 2048;
const FIRST_LINES = 32;
/** Never written: a line first grows the buffer and the array it goes to (grow(), add()). */
const NO_TEXT = Buffer.alloc(0);
const NO_META = new Float64Array(0);

/**
 * One execution's kept lines, stored compactly: their text as UTF-8 in one buffer outside the JS heap, their times,
 * levels and ends in one typed array. An object and a string per line, alive for the whole execution (and past it in
 * the execution log), is what made 100 lines an item cost a burst most: the garbage collector copied each of them out
 * of the young generation (issue 41's bench, `itemLogs`). Buffer.write gives each line's byte length for free, so the
 * byte bound is exact while a line surely fits (its UTF-16 length × 3) and Buffer.byteLength is only asked near it.
 * `lines` builds the structured form when read (the execution log, the console, the tracing writer), a running item's
 * lines included.
 */
export class KeptLines implements ExecutionLines {
  /** Lines logged past the bounds: counted, not kept. */
  dropped = 0;
  private count = 0;
  private bytes = 0;
  /** Shared empty ones until the first line (most items log none, and a logger is made when first read). */
  private text: Buffer = NO_TEXT;
  /** Per line, two numbers: its time (epoch ms), then the end of its text in `text` × 8 + its level's code. */
  private meta: Float64Array = NO_META;

  /** Keeps one line (cut at MAX_ITEM_LOG_LINE_CHARACTERS), or counts it when past a bound. */
  add(level: ExecutionLine['level'], message: string): void {
    if (this.count >= MAX_ITEM_LOG_LINES) {
      this.dropped++;
      return;
    }
    const line =
      message.length > MAX_ITEM_LOG_LINE_CHARACTERS ? message.slice(0, MAX_ITEM_LOG_LINE_CHARACTERS) : message;
    const room = MAX_ITEM_LOG_BYTES - this.bytes;
    let need = line.length * MAX_BYTES_PER_UNIT;
    if (need > room) {
      need = Buffer.byteLength(line, 'utf8');
      if (need > room) {
        this.dropped++;
        return;
      }
    }
    if (this.bytes + need > this.text.length) this.grow(this.bytes + need);
    this.bytes += this.text.write(line, this.bytes, 'utf8');
    if ((this.count + 1) * 2 > this.meta.length) {
      const meta = new Float64Array(Math.min(MAX_ITEM_LOG_LINES, Math.max(FIRST_LINES, this.count * 2)) * 2);
      meta.set(this.meta);
      this.meta = meta;
    }
    this.meta[this.count * 2] = Date.now();
    this.meta[this.count * 2 + 1] = this.bytes * 8 + LEVEL_CODES[level];
    this.count++;
  }

  /** The lines kept so far, built now: a new array each read, the caller's to keep. */
  get lines(): ExecutionLine[] {
    const lines: ExecutionLine[] = [];
    let start = 0;
    for (let index = 0; index < this.count; index++) {
      const endAndLevel = this.meta[index * 2 + 1]!;
      const end = Math.floor(endAndLevel / 8);
      lines.push({
        at: this.meta[index * 2]!,
        level: LEVELS[endAndLevel % 8]!,
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

  /** Doubles the text buffer (from 1 KB, at most MAX_ITEM_LOG_BYTES) until `bytes` fit. */
  private grow(bytes: number): void {
    let size = Math.max(FIRST_TEXT_BYTES, this.text.length);
    while (size < bytes) size *= 2;
    const text = Buffer.allocUnsafe(Math.min(MAX_ITEM_LOG_BYTES, size));
    this.text.copy(text, 0, 0, this.bytes);
    this.text = text;
  }
}
