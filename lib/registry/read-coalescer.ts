import { isConnectionTrouble } from '../errors/elastic-job.errors.js';
import type { ReadAnswer, ReadRequest } from './registry.types.js';
import { MULTI_BATCH_BYTES, MULTI_BATCH_OPS } from './request-limits.js';

interface Pending {
  reads: readonly ReadRequest[];
  bytes: number;
  resolve: (answers: ReadAnswer[]) => void;
  reject: (error: unknown) => void;
}

/**
 * Reads asked for in the same tick by different callers (a thousand jobs' tree caches filling at start-up), sent as
 * few multiRead requests of at most MULTI_BATCH_OPS ops: each caller gets its own answers, in its own order. A
 * request lost to connection trouble fails each of its callers; a caller whose own op failed (an
 * error other than a missing node) is asked again on its own, so one caller's failure is never another's.
 */
export class ReadCoalescer {
  private queue: Pending[] = [];

  constructor(private readonly send: (reads: readonly ReadRequest[]) => Promise<ReadAnswer[]>) {}

  submit(reads: readonly ReadRequest[]): Promise<ReadAnswer[]> {
    if (reads.length === 0) return Promise.resolve([]);
    const bytes = bytesOf(reads);
    if (reads.length >= MULTI_BATCH_OPS / 2 || bytes >= MULTI_BATCH_BYTES / 2) return this.sendAlone(reads);
    return new Promise<ReadAnswer[]>((resolve, reject) => {
      this.queue.push({ reads, bytes, resolve, reject });
      // Gathered until the tick's other work (the other caches' reads set off by the same answers) has run.
      if (this.queue.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const pending = this.queue;
    this.queue = [];
    let batch: Pending[] = [];
    let ops = 0;
    let bytes = 0;
    for (const entry of pending) {
      if (batch.length > 0 && (ops + entry.reads.length > MULTI_BATCH_OPS || bytes + entry.bytes > MULTI_BATCH_BYTES)) {
        void this.sendBatch(batch);
        batch = [];
        ops = 0;
        bytes = 0;
      }
      batch.push(entry);
      ops += entry.reads.length;
      bytes += entry.bytes;
    }
    if (batch.length > 0) void this.sendBatch(batch);
  }

  /** A large ask, cut into requests of at most MULTI_BATCH_OPS ops and MULTI_BATCH_BYTES bytes, sent together. */
  private async sendAlone(reads: readonly ReadRequest[]): Promise<ReadAnswer[]> {
    const parts: Array<Promise<ReadAnswer[]>> = [];
    let from = 0;
    let bytes = 0;
    for (let at = 0; at < reads.length; at++) {
      const size = bytesOf([reads[at]!]);
      if (at > from && (at - from >= MULTI_BATCH_OPS || bytes + size > MULTI_BATCH_BYTES)) {
        parts.push(this.send(reads.slice(from, at)));
        from = at;
        bytes = 0;
      }
      bytes += size;
    }
    parts.push(this.send(reads.slice(from)));
    return (await Promise.all(parts)).flat();
  }

  private async sendBatch(batch: Pending[]): Promise<void> {
    if (batch.length === 1) return this.settle(batch[0]!, this.send(batch[0]!.reads));
    let answers: ReadAnswer[];
    try {
      answers = await this.send(batch.flatMap((entry) => entry.reads));
    } catch (error) {
      if (isConnectionTrouble(error)) {
        for (const entry of batch) entry.reject(error);
        return;
      }
      // Which caller's op failed is not said: each on its own, for its own answer (or its own error).
      await Promise.all(batch.map((entry) => this.settle(entry, this.send(entry.reads))));
      return;
    }
    let at = 0;
    for (const entry of batch) {
      entry.resolve(answers.slice(at, at + entry.reads.length));
      at += entry.reads.length;
    }
  }

  private async settle(entry: Pending, sent: Promise<ReadAnswer[]>): Promise<void> {
    try {
      entry.resolve(await sent);
    } catch (error) {
      entry.reject(error);
    }
  }
}

/** A request's bytes for these reads: each op's header (9) and path (length-prefixed) and watch flag. */
function bytesOf(reads: readonly ReadRequest[]): number {
  let bytes = 0;
  for (const read of reads) bytes += 14 + Buffer.byteLength(read.path);
  return bytes;
}
