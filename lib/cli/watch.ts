import { describeError } from '../errors/elastic-job.errors.js';
import type { RegistryCenter } from '../registry/registry-center.js';

/** Changes closer together than this are drawn once: a busy job writes running markers on every firing. */
const SETTLE_MS = 200;

export interface WatchOptions {
  registry: RegistryCenter;
  /** The namespace-relative subtree whose changes redraw. */
  root: string;
  /** Draws the current state; a failure ends the watch with it. */
  draw(): Promise<void>;
  /** Tells the user about the connection (lost, back). */
  notice(message: string): Promise<void>;
  /** Resolves when the user has had enough (Ctrl-C). */
  stopped: Promise<void>;
}

/**
 * Draws once, then again after every change under `root`, until `stopped` resolves. Changes come from a ZooKeeper
 * persistent recursive watch, which belongs to one connection: it is added again on every reconnection (and the
 * state drawn again, since changes made meanwhile are not replayed), as the library's own watchers do.
 */
export async function watchAndRedraw(options: WatchOptions): Promise<void> {
  const { registry, root } = options;
  let over = false;
  let timer: NodeJS.Timeout | undefined;
  let drawing: Promise<void> | undefined;
  let again = false;
  let fail: (error: unknown) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => (fail = reject));

  const drawNow = (): Promise<void> => {
    timer = undefined;
    const current = options.draw().finally(() => {
      drawing = undefined;
      if (again) schedule();
    });
    drawing = current;
    return current;
  };
  // One draw at a time, in order: a change during a draw draws once more after it.
  const schedule = (): void => {
    if (over) return;
    if (drawing !== undefined) {
      again = true;
      return;
    }
    again = false;
    timer ??= setTimeout(() => void drawNow().catch(fail), SETTLE_MS);
  };
  const watcher = (): void => schedule();

  const unsubscribe = registry.onStateChange((change) => {
    if (change.state === 'SUSPENDED')
      void options.notice('connection to ZooKeeper lost: showing the last state until it is back');
    if (change.state === 'RECONNECTED') {
      void options.notice('connection to ZooKeeper back');
      registry.addPersistentRecursiveWatch(root, watcher).then(schedule, (error: unknown) => {
        void options.notice(`could not watch ${root} again (${describeError(error)}); trying on the next connection`);
      });
    }
  });
  try {
    await registry.addPersistentRecursiveWatch(root, watcher);
    await drawNow();
    await Promise.race([options.stopped, failed]);
  } finally {
    over = true;
    unsubscribe();
    registry.removePersistentRecursiveWatch(root, watcher);
    clearTimeout(timer);
    await drawing?.catch(() => undefined);
  }
}

/** Resolves on the first Ctrl-C (SIGINT) or SIGTERM, to close the session cleanly; a second one ends at once. */
export function untilInterrupted(): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
