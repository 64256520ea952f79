import type { ShardingContext } from '../../interfaces/sharding-context.interface.js';
import type { JobItemExecutor } from './item-executor.js';
import { deadlineSignal } from '../../util/deadline-signal.js';
import { shardingContextJson } from './sharding-context-json.js';

/** The response body kept in an item's result or failure: enough to read an error, bounded for events and logs. */
export const MAX_HTTP_BODY_CHARACTERS = 4096;
const DEFAULT_CONNECT_TIMEOUT_MS = 3000;
const DEFAULT_READ_TIMEOUT_MS = 5000;
const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']);

/** What an HTTP item resolves with. */
export interface HttpItemResult {
  status: number;
  /** The first MAX_HTTP_BODY_CHARACTERS characters of the response body. */
  body: string;
}

/**
 * ElasticJob's HTTP job type (its `ecosystem/executor/http` HttpJobExecutor), each item one request with Node's own
 * `fetch`, from the job's `props` (docs/guide/http-and-script-jobs.md):
 * - `http.uri` (required) and `http.method` (required, as ElasticJob requires it), `http.data` the body (not for GET),
 *   `http.content.type` its Content-Type;
 * - the header `shardingContext`: the item's context as JSON (jobName, taskId, shardingTotalCount, jobParameter,
 *   shardingItem, shardingParameter), as ElasticJob sends it;
 * - `http.connect.timeout.milliseconds` (default 3000) and `http.read.timeout.milliseconds` (default 5000): fetch
 *   has no separate connect phase, so the request as a whole is bounded by their sum, and the body's reading by the
 *   read timeout from the response's arrival;
 * - a status of 400 or more fails the item (our default; ElasticJob only logs it): `http.fail.on.status: false`
 *   keeps ElasticJob's way.
 * The item's signal (shutdown, session loss) aborts the request.
 */
export class HttpItemExecutor implements JobItemExecutor {
  readonly type = 'HTTP';

  constructor(
    /** The job's current properties (read at each item: an update takes effect at the next). */
    private readonly props: () => Readonly<Record<string, string>>,
  ) {}

  async execute(context: ShardingContext): Promise<HttpItemResult> {
    const props = this.props();
    // The item's failure, as a handler's thrown error is: the error handler and the events wrap and report it.
    const fail = (detail: string): never => {
      throw new Error(`HTTP job: ${detail}`);
    };
    const uri = props['http.uri'];
    if (!uri) fail(`props 'http.uri' is required (the URL each item calls)`);
    let url: URL;
    try {
      url = new URL(uri!);
    } catch {
      return fail(`props 'http.uri' is not a URL: '${uri!.slice(0, 200)}'`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      fail(`props 'http.uri' must be http: or https:, got '${url.protocol}'`);
    const method = (props['http.method'] ?? '').toUpperCase();
    if (!METHODS.has(method)) fail(`props 'http.method' must be one of ${[...METHODS].join(', ')}, got '${method}'`);
    const connectMs = timeout(props, 'http.connect.timeout.milliseconds', DEFAULT_CONNECT_TIMEOUT_MS, fail);
    const readMs = timeout(props, 'http.read.timeout.milliseconds', DEFAULT_READ_TIMEOUT_MS, fail);
    const headers: Record<string, string> = {
      shardingContext: shardingContextJson(context),
    };
    if (props['http.content.type']) headers['content-type'] = props['http.content.type'];
    const data = props['http.data'];
    const request = deadlineSignal(context.signal, connectMs + readMs);
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        ...(data !== undefined && data !== '' && method !== 'GET' && method !== 'HEAD' ? { body: data } : {}),
        signal: request.signal,
        redirect: 'follow',
      });
    } catch (error) {
      return fail(`${method} ${url.origin}${url.pathname} ${whyNot(error, context.signal, connectMs + readMs)}`);
    } finally {
      request.clear();
    }
    const reading = deadlineSignal(context.signal, readMs);
    const body = await readBounded(response, reading.signal)
      .catch((error: unknown) =>
        fail(`${method} ${url.origin}${url.pathname}: reading the answer ${whyNot(error, context.signal, readMs)}`),
      )
      .finally(reading.clear);
    if (response.status >= 400 && props['http.fail.on.status'] !== 'false')
      fail(`${method} ${url.origin}${url.pathname} answered ${response.status}: ${body}`);
    return { status: response.status, body };
  }
}

function timeout(
  props: Readonly<Record<string, string>>,
  name: string,
  fallback: number,
  fail: (detail: string) => never,
): number {
  const value = props[name];
  if (value === undefined || value === '') return fallback;
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms < 1 || ms > 3_600_000)
    fail(`props '${name}' must be milliseconds 1..3600000, got '${value}'`);
  return ms;
}

function whyNot(error: unknown, stop: AbortSignal, ms: number): string {
  if (stop.aborted) return `was aborted: ${String(stop.reason instanceof Error ? stop.reason.message : stop.reason)}`;
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return `timed out after ${ms} ms`;
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `failed: ${error instanceof Error ? error.message : String(error)}${cause}`;
}

/** The body's first MAX_HTTP_BODY_CHARACTERS characters; the rest is not read (the connection is closed). */
async function readBounded(response: Response, signal: AbortSignal): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const onAbort = (): void => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', onAbort, { once: true });
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (text.length < MAX_HTTP_BODY_CHARACTERS) {
      if (signal.aborted) throw signal.reason;
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    void reader.cancel().catch(() => undefined);
  }
  return text.slice(0, MAX_HTTP_BODY_CHARACTERS);
}
