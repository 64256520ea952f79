import { type CanActivate, type ExecutionContext, ForbiddenException, Inject, Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { ConsoleStateService } from './console-state.service.js';

/** The header the page sends its token in (README, Console, Security). */
export const CSRF_HEADER = 'x-elastic-job-csrf';

interface HeaderBag {
  headers: Record<string, string | string[] | undefined>;
}

/**
 * Every action route: refused unless actions are enabled, and unless the request comes from the console's own page.
 * A page of another origin can send a POST, but cannot read the token (it is in the console's page, and no CORS
 * header lets another origin read it), and a custom header forces a CORS preflight it would fail; the browser's
 * `Origin` and `Sec-Fetch-Site` headers, when present, must also say same origin (OWASP CSRF cheat sheet:
 * "custom request headers", "verifying origin with standard headers").
 */
@Injectable()
export class ConsoleActionGuard implements CanActivate {
  constructor(@Inject(ConsoleStateService) private readonly state: ConsoleStateService) {}

  canActivate(context: ExecutionContext): boolean {
    if (!this.state.options.actions)
      throw new ForbiddenException('The console is read-only: actions are off (ElasticJobConsoleModule actions: true)');
    const { headers } = context.switchToHttp().getRequest<HeaderBag>();
    const header = (name: string): string | undefined => {
      const value = headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const token = Buffer.from(header(CSRF_HEADER) ?? '');
    const expected = Buffer.from(this.state.csrfToken);
    if (token.length !== expected.length || !timingSafeEqual(token, expected))
      throw new ForbiddenException(`Actions need the console page's ${CSRF_HEADER} header: reload the page`);
    const site = header('sec-fetch-site');
    if (site !== undefined && site !== 'same-origin' && site !== 'none')
      throw new ForbiddenException('Actions are accepted from the console page only (Sec-Fetch-Site)');
    const origin = header('origin');
    const host = header('x-forwarded-host') ?? header('host');
    if (origin !== undefined && (host === undefined || originHost(origin) !== host))
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
