/**
 * Steps run one after another in the order queued, each after the previous one's promise (when it returns one) has
 * settled: the tree cache applies its events in ZooKeeper's order this way, whatever order their reads come back in.
 *
 * Without a promise chain: a chain costs every step three promises and two closures, and a burst of a thousand jobs'
 * running markers is four events a job, most of them still queued when the young generation is next collected, so
 * promoted to the old one (docs/benchmarks.md, issue 43, "RSS after the bursts"). Here a step that returns nothing
 * costs its array slot; steps run in one microtask until one returns a promise.
 */
type Step = () => void | Promise<void>;

interface Settle {
  resolve(): void;
  reject(error: unknown): void;
}

/** Past this many run steps at the front, the array is cut (a queue that is never idle does not grow forever). */
const COMPACT_AFTER = 1024;

export class StepQueue {
  /** Pairs: a step, then its caller's settle (run()) or undefined (push()). Made when first needed. */
  private slots: Array<Step | Settle | undefined> | undefined;
  private next = 0;
  private draining = false;
  /** Every step that settles a caller is a closure over this, made once. */
  private readonly drainNow = (): void => this.drain();

  /** `enabled`: asked before each step; a step queued while it says no is skipped (its caller's promise resolves). */
  constructor(private readonly enabled: () => boolean) {}

  /** Queues a step nobody waits for; its failure is dropped (the step reports what it must itself). */
  push(step: Step): void {
    this.enqueue(step, undefined);
  }

  /** Queues a step; resolves when it has run (or was skipped), rejects with its failure. */
  run(step: Step): Promise<void> {
    return new Promise<void>((resolve, reject) => this.enqueue(step, { resolve, reject }));
  }

  /** Whether steps are queued or running: idle() would wait. */
  get busy(): boolean {
    return this.draining;
  }

  /** Resolves when every step queued so far has run. */
  idle(): Promise<void> {
    return this.draining ? this.run(noop) : Promise.resolve();
  }

  private enqueue(step: Step, settle: Settle | undefined): void {
    (this.slots ??= []).push(step, settle);
    if (this.draining) return;
    this.draining = true;
    queueMicrotask(this.drainNow);
  }

  private drain(): void {
    const slots = this.slots!;
    while (this.next < slots.length) {
      const step = slots[this.next] as Step;
      const settle = slots[this.next + 1] as Settle | undefined;
      slots[this.next] = slots[this.next + 1] = undefined;
      this.next += 2;
      if (!this.enabled()) {
        settle?.resolve();
        continue;
      }
      let result: void | Promise<void>;
      try {
        result = step();
      } catch (error) {
        settle?.reject(error);
        continue;
      }
      if (result === undefined) {
        settle?.resolve();
        continue;
      }
      // The next step waits for this one's promise.
      if (settle === undefined) result.then(this.drainNow, this.drainNow);
      else
        result.then(
          () => {
            settle.resolve();
            this.drain();
          },
          (error: unknown) => {
            settle.reject(error);
            this.drain();
          },
        );
      this.compact(slots);
      return;
    }
    this.slots = undefined;
    this.next = 0;
    this.draining = false;
  }

  private compact(slots: Array<Step | Settle | undefined>): void {
    if (this.next < COMPACT_AFTER || this.next * 2 < slots.length) return;
    slots.splice(0, this.next);
    this.next = 0;
  }
}

const noop = (): void => undefined;
