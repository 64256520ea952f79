import type { CanActivate, ExecutionContext } from '@nestjs/common';

/**
 * The sample console's guard: requests from this machine only. A real app puts its own authentication here (a
 * session, a JWT, an admin role): the console asks the guard on every route, the page's data and actions alike.
 */
export class LocalhostOnlyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const address = context.switchToHttp().getRequest<{ socket: { remoteAddress?: string } }>().socket.remoteAddress;
    return address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';
  }
}
