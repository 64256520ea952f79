/**
 * A signal that aborts when `parent` (if any) does or when `ms` have passed (with a DOMException named
 * 'TimeoutError', as AbortSignal.timeout's), `abort()` to end the work early, and `clear()` to drop its timer once
 * the work is done. Not
 * `AbortSignal.any([parent, AbortSignal.timeout(ms)])`: Node's timeout signal is held weakly by its own timer and
 * not kept alive by `any`, so a garbage collection during the request dropped it and the request waited for the
 * server however long it took (nodejs/node issue 57736; test/unit/http-item-timeout.spec.ts).
 */
export function deadlineSignal(
  parent: AbortSignal | undefined,
  ms: number,
): { signal: AbortSignal; clear: () => void; abort: (reason: unknown) => void } {
  const controller = new AbortController();
  const onParentAbort = (): void => controller.abort(parent?.reason);
  if (parent?.aborted) onParentAbort();
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  const timer = setTimeout(
    () => controller.abort(new DOMException(`The operation timed out after ${ms} ms`, 'TimeoutError')),
    ms,
  );
  return {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    clear: () => {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}
