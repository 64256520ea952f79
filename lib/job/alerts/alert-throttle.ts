/**
 * At most one alert per kind of error in a window (issue 40: a job failing every second must not send thousands of
 * mails an hour). The kind is the error's class and its message with the digits taken out, so that `timeout after
 * 5012 ms` and `timeout after 5020 ms` are one kind. The first failure of a kind is sent; the others of its window are
 * held back and counted, and the next one sent after the window says how many. Pure: the clock is given.
 */
export class AlertThrottle {
  private readonly kinds = new Map<string, { sentAt: number; heldBack: number }>();

  constructor(
    private readonly windowMs: () => number,
    private readonly now: () => number = Date.now,
    /** Kinds remembered at most; the oldest are forgotten first (a job throwing ever new messages stays bounded). */
    private readonly maxKinds = 256,
  ) {}

  /** Whether to send an alert for this failure now, and how many of its kind were held back since the last one. */
  admit(error: unknown): { send: true; heldBack: number } | { send: false } {
    const window = this.windowMs();
    const now = this.now();
    const kind = errorKind(error);
    const seen = this.kinds.get(kind);
    if (seen !== undefined && window > 0 && now - seen.sentAt < window) {
      seen.heldBack++;
      return { send: false };
    }
    const heldBack = seen?.heldBack ?? 0;
    this.kinds.delete(kind); // re-inserted last: the map's order is the order of sending
    this.kinds.set(kind, { sentAt: now, heldBack: 0 });
    while (this.kinds.size > this.maxKinds) this.kinds.delete(this.kinds.keys().next().value!);
    return { send: true, heldBack };
  }
}

/** An error's kind: its class and its message, digits and hex runs replaced, the first 200 characters. */
export function errorKind(error: unknown): string {
  const name = error instanceof Error ? error.constructor.name || error.name : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  return `${name}: ${message.replace(/\b0x[0-9a-f]+\b|[0-9a-f]{8,}|\d+/gi, '#').slice(0, 200)}`;
}
