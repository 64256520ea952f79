import {
  BadRequestException,
  type CanActivate,
  type ExecutionContext,
  ForbiddenException,
  Inject,
  Injectable,
} from '@nestjs/common';
import { describeError } from '../errors/elastic-job.errors.js';
import { timingSafeEqual } from 'node:crypto';
import { ConsoleStateService } from './console-state.service.js';

/**
 * The header the page sends its token in, and the cookie it was given beside it (docs/guide/console.md, "Security").
 */
export const CSRF_HEADER = 'x-elastic-job-csrf';
export const CSRF_COOKIE = 'elastic-job-csrf';
/** What newCsrfToken() makes: 24 random bytes, base64url. */
const TOKEN = /^[A-Za-z0-9_-]{32}$/;

interface HeaderBag {
  headers: Record<string, string | string[] | undefined>;
}

function header(request: HeaderBag, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The console's token cookie in a request, when it holds one. */
export function csrfCookie(request: HeaderBag): string | undefined {
  for (const pair of (header(request, 'cookie') ?? '').split(';')) {
    const [name, value] = pair.trim().split('=');
    if (name === CSRF_COOKIE && value !== undefined && TOKEN.test(value)) return value;
  }
  return undefined;
}

/**
 * Every action route: refused unless actions are enabled, and unless the request comes from the console's page.
 * The page is given a random token twice, in its HTML and in a `SameSite=Strict`, HttpOnly cookie; an action must
 * send it back in a header equal to the cookie (OWASP CSRF cheat sheet: "double submit cookie", "custom request
 * headers"). Another site's page cannot read the token, cannot set the header without a CORS preflight that fails,
 * and its requests carry no Strict cookie. Stateless, so any replica behind a load balancer accepts it. A browser's
 * `Sec-Fetch-Site` must also say same origin; without it (older browsers), a sent `Origin` must match `Host`.
 */
@Injectable()
export class ConsoleActionGuard implements CanActivate {
  constructor(@Inject(ConsoleStateService) private readonly state: ConsoleStateService) {}

  canActivate(context: ExecutionContext): boolean {
    if (!this.state.options.actions)
      throw new ForbiddenException('The console is read-only: actions are off (ElasticJobConsoleModule actions: true)');
    const request = context.switchToHttp().getRequest<HeaderBag & { query?: Record<string, unknown> }>();
    // Another registry is read-only unless its entry says otherwise.
    const registry = request.query?.registry;
    let actionsThere: boolean;
    try {
      actionsThere = this.state.namespace(typeof registry === 'string' ? registry : undefined).actions;
    } catch (error) {
      throw new BadRequestException(describeError(error));
    }
    if (!actionsThere)
      throw new ForbiddenException(
        `The registry '${String(registry)}' is read-only here: give its entry in the console's registries actions: true`,
      );
    const sent = Buffer.from(header(request, CSRF_HEADER) ?? '');
    const cookie = Buffer.from(csrfCookie(request) ?? '');
    if (cookie.length === 0 || sent.length !== cookie.length || !timingSafeEqual(sent, cookie))
      throw new ForbiddenException(`Actions need the console page's token (${CSRF_HEADER}): reload the page`);
    const site = header(request, 'sec-fetch-site');
    if (site !== undefined) {
      if (site !== 'same-origin')
        throw new ForbiddenException('Actions are accepted from the console page only (Sec-Fetch-Site)');
      return true;
    }
    const origin = header(request, 'origin');
    if (origin !== undefined && originHost(origin) !== header(request, 'host'))
      throw new ForbiddenException('Actions are accepted from the console page only (Origin)');
    return true;
  }
}

/** The host of an Origin header; undefined for `null` (a sandboxed or opaque origin) and anything malformed. */
function originHost(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}
