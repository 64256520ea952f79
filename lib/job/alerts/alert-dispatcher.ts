import type { Logger } from '@nestjs/common';
import type { ShardingContext } from '../../interfaces/sharding-context.interface.js';
import { OutageLog } from '../../util/outage-log.js';
import { alertMessage, type AlertMessage } from './alert-message.js';
import { ALERT_DEFAULTS, intProp, THROTTLE_PROP, type AlertHandlerType } from './alert-props.js';
import { AlertThrottle } from './alert-throttle.js';
import { sendEmail } from './email-alerts.js';
import { sendDingtalk, sendWebhook, sendWechat } from './http-alerts.js';

/** One alert's delivery: resolves when delivered, rejects with an error safe to print when not. */
export type AlertSend = (
  type: AlertHandlerType,
  message: AlertMessage,
  props: Readonly<Record<string, string>>,
  context: { shardingItem: number; taskId: string },
  /** Aborted when the job stops here and the delivery is given up (AlertDispatcher.close). */
  signal: AbortSignal,
) => Promise<void>;

export const sendAlert: AlertSend = (type, message, props, context, signal) => {
  switch (type) {
    case 'EMAIL':
      return sendEmail(message, props, signal);
    case 'WECHAT':
      return sendWechat(message, props, signal);
    case 'DINGTALK':
      return sendDingtalk(message, props, signal);
    case 'WEBHOOK':
      return sendWebhook(message, props, context, signal);
  }
};

/** How long a job's stop waits for the alerts still being delivered before it gives them up. */
export const ALERT_CLOSE_GRACE_MS = 5_000;

/** Alerts of one job being delivered at once, at most: past it an alert is dropped and counted as not delivered. */
export const MAX_ALERTS_IN_FLIGHT = 8;

/**
 * A job's alerts (its EMAIL, WECHAT, DINGTALK or WEBHOOK error handler), never worse than no alert (issue 40):
 * `alert()` returns at once, the delivery goes on off the item's path (it neither delays the item, its firing nor the
 * next, and cannot fail the item again); a delivery that fails is logged by the outage rules of the transports
 * (util/outage-log.ts: a line when the channel goes, a count, a line when it is back); the throttle keeps a job
 * failing every second to one alert per kind of error a window.
 */
export class AlertDispatcher {
  private readonly throttle: AlertThrottle;
  private readonly outage: OutageLog;
  /** The deliveries under way. */
  private readonly pending = new Set<Promise<void>>();
  /** Aborted by close(): the deliveries still under way are given up. */
  private readonly closing = new AbortController();

  constructor(
    readonly type: AlertHandlerType,
    private readonly logger: Pick<Logger, 'log' | 'warn'>,
    /** The job's current properties (an operator's edit applies from the next failure). */
    private readonly props: () => Readonly<Record<string, string>>,
    private readonly send: AlertSend = sendAlert,
    now: () => number = Date.now,
  ) {
    this.throttle = new AlertThrottle(() => this.windowMs(), now);
    this.outage = new OutageLog(logger, `the ${type} alert channel`, 'alert(s)', now);
  }

  /** Settles when the deliveries under way have (for tests); never rejects. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /**
   * The job stops here: alerts still being delivered get `graceMs` to arrive, then they are given up (their sockets
   * closed, one line saying how many), so that a hanging receiver holds neither the app's shutdown nor its process.
   */
  async close(graceMs = ALERT_CLOSE_GRACE_MS): Promise<void> {
    if (this.closing.signal.aborted) return;
    if (this.pending.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.idle(), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
    }
    const left = this.pending.size;
    this.closing.abort(new Error('the job stopped on this instance'));
    if (left > 0)
      this.logger.warn(
        `${left} alert(s) by ${this.type} not delivered within ${graceMs} ms of the job's stop: given up`,
      );
    await this.idle();
  }

  alert(jobName: string, error: unknown, context: Pick<ShardingContext, 'shardingItem' | 'taskId'>): void {
    if (this.closing.signal.aborted) return;
    const admitted = this.throttle.admit(error);
    if (!admitted.send) return;
    const props = this.props();
    const where = { shardingItem: context.shardingItem, taskId: context.taskId };
    if (this.pending.size >= MAX_ALERTS_IN_FLIGHT) {
      this.outage.failed(new Error(`${MAX_ALERTS_IN_FLIGHT} alerts still being delivered`), 'alerts are dropped');
      return;
    }
    // Sent from the next turn of the event loop: nothing of it runs on the item's path.
    const delivery = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() =>
        this.send(
          this.type,
          alertMessage(jobName, error, context, admitted.heldBack, this.windowMs()),
          props,
          where,
          this.closing.signal,
        ),
      )
      .then(
        () => {
          this.outage.recovered();
          // ElasticJob's handlers log each sent alert ("an email has been sent successfully"): at most one a window.
          this.logger.log(`an alert of item ${context.shardingItem}'s failure was sent by ${this.type}`);
        },
        (failure: unknown) => {
          // Given up at the job's stop: said once by close(), not an outage of the channel.
          if (!this.closing.signal.aborted) this.outage.failed(failure, 'alerts are not sent until it answers');
        },
      )
      .finally(() => this.pending.delete(delivery));
    this.pending.add(delivery);
  }

  private windowMs(): number {
    return intProp(this.props(), THROTTLE_PROP, ALERT_DEFAULTS.throttleSeconds) * 1000;
  }
}
