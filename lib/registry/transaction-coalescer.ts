import type { TransactionOp } from './registry.types.js';
import { MULTI_BATCH_BYTES, MULTI_BATCH_OPS } from './request-limits.js';

interface Pending {
  ops: readonly TransactionOp[];
  bytes: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Transactions asked for in the same tick by different jobs of a process, sent to ZooKeeper as few multi requests:
 * a thousand jobs firing at one instant write their running markers in a few requests (each logged and synced once
 * by the server) instead of a thousand. Each transaction keeps its meaning: a combined request applies all or
 * nothing, so when it fails (one job's marker is another instance's, say) each transaction is sent again on its own
 * and gets its own answer; no job waits for another's failure beyond that one round trip. A transaction too large
 * to share a request goes alone.
 */
export class TransactionCoalescer {
  private queue: Pending[] = [];

  constructor(
    private readonly send: (ops: readonly TransactionOp[]) => Promise<void>,
    private readonly bytesOf: (ops: readonly TransactionOp[]) => number,
  ) {}

  submit(ops: readonly TransactionOp[]): Promise<void> {
    if (ops.length === 0) return Promise.resolve();
    const bytes = this.bytesOf(ops);
    if (ops.length > MULTI_BATCH_OPS / 2 || bytes > MULTI_BATCH_BYTES / 2) return this.send(ops);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ ops, bytes, resolve, reject });
      // Gathered until the tick's other work (the other jobs' firings of this instant) has run.
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
      if (batch.length > 0 && (ops + entry.ops.length > MULTI_BATCH_OPS || bytes + entry.bytes > MULTI_BATCH_BYTES)) {
        void this.sendBatch(batch);
        batch = [];
        ops = 0;
        bytes = 0;
      }
      batch.push(entry);
      ops += entry.ops.length;
      bytes += entry.bytes;
    }
    if (batch.length > 0) void this.sendBatch(batch);
  }

  private async sendBatch(batch: Pending[]): Promise<void> {
    if (batch.length === 1) return this.settle(batch[0]!, this.send(batch[0]!.ops));
    try {
      await this.send(batch.flatMap((entry) => entry.ops));
      for (const entry of batch) entry.resolve();
    } catch {
      // Nothing of it was applied: each on its own, for its own answer.
      await Promise.all(batch.map((entry) => this.settle(entry, this.send(entry.ops))));
    }
  }

  private async settle(entry: Pending, sent: Promise<void>): Promise<void> {
    try {
      await sent;
      entry.resolve();
    } catch (error) {
      entry.reject(error);
    }
  }
}
