import { createHmac } from 'node:crypto';
import { ALERT_DEFAULTS, intProp } from './alert-props.js';
import type { AlertMessage } from './alert-message.js';
import { DependencyUnavailableError } from '../../errors/elastic-job.errors.js';
import { deadlineSignal } from '../../util/deadline-signal.js';

/** The JSON bodies a robot answers with (DingTalk's and WeCom's: `errcode` 0 when the message was taken). */
interface RobotAnswer {
  errcode?: number | string;
  errmsg?: string;
}

/**
 * DingTalk's custom robot, as ElasticJob's DingtalkJobErrorHandler.java posts to it: `{"msgtype":"text","text":
 * {"content": keyword + text}}`, and with a secret the URL signed: `&timestamp=<ms>&sign=<HMAC-SHA256 of
 * "timestamp\nsecret" keyed by the secret, base64, URL-encoded>`.
 */
export async function sendDingtalk(
  message: AlertMessage,
  props: Readonly<Record<string, string>>,
  signal?: AbortSignal,
): Promise<void> {
  const url = new URL(props['dingtalk.webhook']!.trim());
  const secret = props['dingtalk.secret'];
  if (secret) {
    const timestamp = String(Date.now());
    url.searchParams.set('timestamp', timestamp);
    url.searchParams.set('sign', dingtalkSignature(timestamp, secret));
  }
  const content = `${props['dingtalk.keyword'] ?? ''}${message.text}`;
  await postRobot('DingTalk', url, { msgtype: 'text', text: { content } }, timeouts(props, 'dingtalk'), signal);
}

/** The signature DingTalk's robot checks (its "加签" security setting), as ElasticJob generates it. */
export function dingtalkSignature(timestamp: string, secret: string): string {
  return createHmac('sha256', secret).update(`${timestamp}\n${secret}`, 'utf8').digest('base64');
}

/** WeCom's group robot, as ElasticJob's WechatJobErrorHandler.java posts to it: `{"msgtype":"text","text":{...}}`. */
export async function sendWechat(
  message: AlertMessage,
  props: Readonly<Record<string, string>>,
  signal?: AbortSignal,
): Promise<void> {
  const url = new URL(props['wechat.webhook']!.trim());
  const content = cutToBytes(message.text, WECOM_MAX_TEXT_BYTES);
  await postRobot('WeCom', url, { msgtype: 'text', text: { content } }, timeouts(props, 'wechat'), signal);
}

/** WeCom's group robot takes a text message of at most 2048 bytes of UTF-8, as its API documents. */
export const WECOM_MAX_TEXT_BYTES = 2048;

/** `text` cut to at most `maxBytes` of UTF-8, on a character's boundary, ending with '…' when cut. */
export function cutToBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  let bytes = Buffer.byteLength('…', 'utf8');
  let end = 0;
  for (const character of text) {
    bytes += Buffer.byteLength(character, 'utf8');
    if (bytes > maxBytes) break;
    end += character.length;
  }
  return `${text.slice(0, end)}…`;
}

/**
 * This library's WEBHOOK: a JSON POST whose `text` is what a Slack (or Mattermost, Rocket.Chat, Teams workflow)
 * incoming webhook shows, with the job's name, item and task beside it for other receivers. Any 2xx is taken.
 */
export async function sendWebhook(
  message: AlertMessage,
  props: Readonly<Record<string, string>>,
  context: { shardingItem: number; taskId: string },
  signal?: AbortSignal,
): Promise<void> {
  const url = new URL(props['webhook.url']!.trim());
  const body = { text: message.text, jobName: message.jobName, ...context };
  const response = await post(url, body, timeouts(props, 'webhook'), signal);
  if (response.status < 200 || response.status > 299)
    throw new DependencyUnavailableError(url.origin, `${url.origin} answered HTTP ${response.status}`);
}

async function postRobot(
  robot: string,
  url: URL,
  body: unknown,
  limits: Timeouts,
  signal: AbortSignal | undefined,
): Promise<void> {
  const response = await post(url, body, limits, signal);
  // ElasticJob takes HTTP 200 with errcode "0" as sent; anything else is logged as not sent.
  if (response.status !== 200)
    throw new DependencyUnavailableError(url.origin, `${robot} answered HTTP ${response.status}`);
  let answer: RobotAnswer;
  try {
    answer = JSON.parse(response.text) as RobotAnswer;
  } catch {
    throw new DependencyUnavailableError(url.origin, `${robot} answered something else than JSON`);
  }
  if (String(answer?.errcode) !== '0')
    throw new DependencyUnavailableError(
      url.origin,
      `${robot} refused the message: errcode ${String(answer?.errcode)} ${String(answer?.errmsg ?? '').slice(0, 200)}`,
    );
}

interface Timeouts {
  connectMs: number;
  readMs: number;
}

function timeouts(props: Readonly<Record<string, string>>, prefix: string): Timeouts {
  return {
    connectMs: intProp(props, `${prefix}.connectTimeoutMilliseconds`, ALERT_DEFAULTS.connectTimeoutMilliseconds),
    readMs: intProp(props, `${prefix}.readTimeoutMilliseconds`, ALERT_DEFAULTS.readTimeoutMilliseconds),
  };
}

/**
 * One POST with Node's fetch. It has no separate connect phase, so the request is bounded by both timeouts summed,
 * and the answer's reading by the read timeout (as the HTTP job type does: http-item-executor.ts). Errors name the
 * URL's origin only: its path and query may carry the robot's token.
 */
async function post(
  url: URL,
  body: unknown,
  limits: Timeouts,
  given: AbortSignal | undefined,
): Promise<{ status: number; text: string }> {
  // Not AbortSignal.any with AbortSignal.timeout: a garbage collection can drop the timeout (deadline-signal.ts).
  const deadline = deadlineSignal(given, limits.connectMs + limits.readMs);
  try {
    return await postWithin(url, body, limits, deadline.signal);
  } catch (error) {
    // The answer's read lost its race with the read timeout: its stream, locked by text(), is only ended by the
    // request's signal (cancelling a locked body is refused), and the socket would wait for the server.
    deadline.abort(error);
    throw error;
  } finally {
    deadline.clear();
  }
}

/** The POST itself, aborted by `signal`; the answer read within the read timeout. */
async function postWithin(
  url: URL,
  body: unknown,
  limits: Timeouts,
  signal: AbortSignal,
): Promise<{ status: number; text: string }> {
  const where = url.origin;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify(body),
      signal,
      redirect: 'error',
    });
  } catch (error) {
    throw new DependencyUnavailableError(where, `POST to ${where} ${failure(error, limits.connectMs + limits.readMs)}`);
  }
  let timer: NodeJS.Timeout | undefined;
  try {
    const text = await Promise.race([
      response.text(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new DOMException('timed out', 'TimeoutError')), limits.readMs);
      }),
    ]);
    return { status: response.status, text: text.slice(0, 4096) };
  } catch (error) {
    void response.body?.cancel().catch(() => undefined);
    throw new DependencyUnavailableError(where, `reading the answer of ${where} ${failure(error, limits.readMs)}`);
  } finally {
    clearTimeout(timer);
  }
}

function failure(error: unknown, ms: number): string {
  if (error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return `timed out after ${ms} ms`;
  // fetch's TypeError says "fetch failed"; its cause says why (ECONNREFUSED 127.0.0.1:port): no path, no query.
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = (cause as { code?: unknown })?.code;
  return `failed: ${typeof code === 'string' ? code : cause instanceof Error ? cause.message : String(cause)}`;
}
