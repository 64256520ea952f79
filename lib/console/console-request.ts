import {
  createParamDecorator,
  type ExecutionContext,
  ForbiddenException,
  Header,
  HttpException,
  Logger,
} from '@nestjs/common';
import { describeError, InvalidOperationError, quoteInput } from '../errors/elastic-job.errors.js';
import { ELASTIC_JOB_ERROR_CODES, errorPayload, isHiddenFromCaller } from '../errors/error-payload.js';
import type { ExecutionHistoryQuery } from '../interfaces/execution-history.interface.js';
import { checkExecutionQuery, checkJobName, MAX_EXECUTIONS_PER_QUERY } from '../lifecycle/operator-input.js';
import type { ConsoleNamespace } from './console-namespace.js';
import type { ConsoleRequest } from './console-options.js';

/**
 * How the console's routes read a request and answer a failure: query values given once, integers in range, the
 * executions query, the `?registry=` parameter, the page's security headers, errors as HTTP answers with their code.
 */
/** The page and its assets: scripts from this origin only, never framed (clickjacking of the action buttons). */
const PAGE_HEADERS: ReadonlyArray<[string, string]> = [
  [
    'Content-Security-Policy',
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  ],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'same-origin'],
];

/** A query parameter given once, as text (`?name=a&name=b` is refused rather than read as an array). */
export function text(value: unknown, field: string): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  throw httpError(new InvalidOperationError('query', field, 'must be given once, as text'));
}

export function integer(value: string | undefined, field: string, fallback: number, min: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max)
    throw httpError(
      new InvalidOperationError('query', field, `must be an integer ${min}..${max}, got ${quoteInput(value)}`),
    );
  return n;
}

/**
 * Without a tracing store the executions are asked of every instance, which writes query and reply nodes in
 * ZooKeeper: a GET another site's page makes (an image, a link) must not set that going. Browsers say where a request
 * comes from (`Sec-Fetch-Site`); scripts and older browsers send nothing and are let through, as for the page.
 */
export function refuseCrossSite(request: ConsoleRequest): void {
  const site = request.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site')
    throw new ForbiddenException('The executions are read from the console page only (Sec-Fetch-Site)');
}

/** An executions query from the page's query string, checked as the operator API checks one. */
export function executionQuery(
  operation: string,
  raw: Partial<Record<'job' | 'item' | 'instance' | 'result' | 'from' | 'to' | 'offset' | 'limit', unknown>>,
  defaultLimit: number,
): ExecutionHistoryQuery {
  const given = (field: keyof typeof raw): string | undefined => {
    const value = text(raw[field], field);
    return value === '' ? undefined : value;
  };
  const instant = (field: 'from' | 'to'): Date | undefined => {
    const value = given(field);
    if (value === undefined) return undefined;
    const time = new Date(value);
    if (Number.isNaN(time.getTime()))
      throw httpError(new InvalidOperationError(operation, field, `must be an ISO instant, got ${quoteInput(value)}`));
    return time;
  };
  const job = given('job');
  if (job !== undefined)
    try {
      checkJobName(job, operation, 'job');
    } catch (error) {
      throw httpError(error);
    }
  const query: Record<string, unknown> = {
    limit: integer(given('limit'), 'limit', defaultLimit, 1, MAX_EXECUTIONS_PER_QUERY),
    jobName: job,
    item: given('item') === undefined ? undefined : integer(given('item'), 'item', 0, 0, Number.MAX_SAFE_INTEGER),
    instance: given('instance'),
    result: given('result'),
    from: instant('from'),
    to: instant('to'),
    offset: integer(given('offset'), 'offset', 0, 0, Number.MAX_SAFE_INTEGER),
  };
  for (const key of Object.keys(query)) if (query[key] === undefined) delete query[key];
  try {
    return checkExecutionQuery(query, operation);
  } catch (error) {
    throw httpError(error);
  }
}

/**
 * Failures as HTTP answers, with the status, name and code they have on every surface (errors/error-payload.ts):
 * `{ statusCode, name, code, message, registryCode? }`; what the answer leaves out is logged.
 */
export function httpError(error: unknown): unknown {
  if (isHiddenFromCaller(error))
    new Logger('ElasticJob:console').error(`a console request failed: ${describeError(error)}`);
  const payload = errorPayload(error);
  const status = ELASTIC_JOB_ERROR_CODES[payload.code].httpStatus;
  return new HttpException({ statusCode: status, ...payload }, status);
}

/**
 * The namespace a request's `?registry=` names (the app's own when absent), for every route of the console's
 * controllers; a registry given twice, or unknown, refused as an HTTP answer.
 */
export function namespaceOf(
  state: { namespace(name: string | undefined): ConsoleNamespace },
  registry: unknown,
): ConsoleNamespace {
  const name = text(registry, 'registry');
  try {
    return state.namespace(name);
  } catch (error) {
    throw httpError(error);
  }
}

export async function answer<T>(work: Promise<T> | (() => Promise<T>)): Promise<T> {
  try {
    return await (typeof work === 'function' ? work() : work);
  } catch (error) {
    throw httpError(error);
  }
}

/** The `?registry=` a request names (the app's own registry when absent): every route but the page takes it. */
export const Registry = createParamDecorator(
  (_: unknown, context: ExecutionContext): unknown =>
    context.switchToHttp().getRequest<{ query?: Record<string, unknown> }>().query?.registry,
);

export function pageHeaders(): MethodDecorator {
  return (target, key, descriptor) => {
    for (const [name, value] of PAGE_HEADERS) Header(name, value)(target, key, descriptor);
  };
}
