import {
  type CanActivate,
  Controller,
  Get,
  Header,
  Inject,
  type MessageEvent,
  Param,
  Query,
  Req,
  Res,
  Sse,
  type Type,
  UseGuards,
} from '@nestjs/common';
import { interval, map, merge, type Observable, takeUntil } from 'rxjs';
import {
  DependencyUnavailableError,
  describeError,
  InvalidOperationError,
  JobNotFoundError,
  quoteInput,
} from '../errors/elastic-job.errors.js';
import { JOB_BRIEF_STATUSES } from '../lifecycle/lifecycle.types.js';
import { checkJobName } from '../lifecycle/operator-input.js';
import type { ExecutionHistoryQuery } from '../interfaces/execution-history.interface.js';
import { describeCron, formatFireTimes } from '../schedule/cron-preview.js';
import type { ConsoleRequest, ResolvedConsoleOptions } from './console-options.js';
import { CSRF_COOKIE, csrfCookie } from './console-action.guard.js';
import type { ConsoleNamespace } from './console-namespace.js';
import { ConsoleStateService } from './console-state.service.js';
import { CONSOLE_SCRIPT, CONSOLE_STYLE, consoleHtml } from './page/console-page.js';
import {
  answer,
  executionQuery,
  httpError,
  integer,
  namespaceOf,
  pageHeaders,
  refuseCrossSite,
  Registry,
  text,
} from './console-request.js';

/** Keeps proxies from closing a quiet live stream. */
const HEARTBEAT_MS = 25_000;
const MAX_PAGE = 200;
const STATUSES: readonly string[] = JOB_BRIEF_STATUSES;

/**
 * The console's routes under its path, guarded by the app's guard (all of them) and the action guard (the POSTs).
 * Made per forRoot() because a controller's path and guards are set by decorators.
 */
export function createConsoleController(options: ResolvedConsoleOptions): Type<unknown> {
  const guards: Array<Type<CanActivate> | CanActivate> = options.guard === undefined ? [] : [options.guard];
  const LAST_SEGMENT = options.path.split('/').at(-1)!;

  @Controller(options.path)
  @UseGuards(...guards)
  class ElasticJobConsoleController {
    constructor(@Inject(ConsoleStateService) private readonly state: ConsoleStateService) {}

    /** The namespace `?registry=` names; a 400 naming the known ones for another name. */
    private ns(registry: unknown): ConsoleNamespace {
      return namespaceOf(this.state, registry);
    }

    @Get('api/registries')
    @Header('Cache-Control', 'no-store')
    registries() {
      return this.state.registries();
    }

    @Get()
    @Header('Content-Type', 'text/html; charset=utf-8')
    @Header('Cache-Control', 'no-store')
    @pageHeaders()
    page(
      @Req() request: { url?: string; originalUrl?: string; headers: Record<string, string | string[] | undefined> },
      @Res({ passthrough: true }) response: { header(name: string, value: string): unknown },
    ): string {
      // One token per browser (kept while its cookie lives: several tabs share it), given twice (see the guard).
      const token = csrfCookie(request) ?? this.state.newCsrfToken();
      response.header('Set-Cookie', `${CSRF_COOKIE}=${token}; HttpOnly; SameSite=Strict`);
      // Assets relative to the page, so a proxy's path prefix or the app's global prefix needs no configuration:
      // from `.../elastic-job` they are `elastic-job/console.js`, from `.../elastic-job/` just `console.js`.
      const path = (request.originalUrl ?? request.url ?? '').split(/[?#]/)[0]!;
      const assets = path.endsWith('/') ? '' : `${LAST_SEGMENT}/`;
      return consoleHtml({
        assets,
        title: this.state.options.title,
        csrfToken: token,
        actions: this.state.options.actions,
        history: this.state.namespace(undefined).historySource,
      });
    }

    @Get('console.js')
    @Header('Content-Type', 'text/javascript; charset=utf-8')
    @Header('Cache-Control', 'no-cache')
    @pageHeaders()
    script(): string {
      return CONSOLE_SCRIPT;
    }

    @Get('console.css')
    @Header('Content-Type', 'text/css; charset=utf-8')
    @Header('Cache-Control', 'no-cache')
    @pageHeaders()
    style(): string {
      return CONSOLE_STYLE;
    }

    @Get('api/jobs')
    @Header('Cache-Control', 'no-store')
    jobs(
      @Registry() registry: unknown,
      @Query('name') name?: unknown,
      @Query('status') status?: unknown,
      @Query('offset') offset?: unknown,
      @Query('limit') limit?: unknown,
    ) {
      const statusFilter = text(status, 'status');
      if (statusFilter && !STATUSES.includes(statusFilter))
        throw httpError(
          new InvalidOperationError(
            'query',
            'status',
            `must be one of ${STATUSES.join(', ')}, got ${quoteInput(statusFilter)}`,
          ),
        );
      const nameFilter = text(name, 'name');
      return answer(
        this.ns(registry).jobs({
          ...(nameFilter === undefined ? {} : { name: nameFilter }),
          ...(statusFilter ? { status: statusFilter } : {}),
          offset: integer(text(offset, 'offset'), 'offset', 0, 0, Number.MAX_SAFE_INTEGER),
          limit: integer(text(limit, 'limit'), 'limit', 50, 1, MAX_PAGE),
        }),
      );
    }

    @Get('api/jobs/:name')
    @Header('Cache-Control', 'no-store')
    async job(@Param('name') name: string, @Registry() registry: unknown) {
      const namespace = this.ns(registry);
      return answer(async () => {
        const detail = await namespace.job(checkJobName(name, 'job'));
        if (detail === undefined) throw new JobNotFoundError(name);
        return detail;
      });
    }

    /**
     * One execution's kept lines (docs/guide/item-policies.md, "Item logs"), asked of `instance` (the execution's
     * instance id) or of the job's instances: fetched when the page opens an execution, never with the history.
     */
    @Get('api/jobs/:name/executions/:id/lines')
    @Header('Cache-Control', 'no-store')
    async executionLines(
      @Req() request: ConsoleRequest,
      @Param('name') name: string,
      @Param('id') id: string,
      @Registry() registry: unknown,
      @Query('instance') instance?: unknown,
    ) {
      refuseCrossSite(request);
      const namespace = this.ns(registry);
      return answer(async () => {
        const jobName = checkJobName(name, 'getExecutionLines');
        if (instance !== undefined && typeof instance !== 'string')
          throw new InvalidOperationError('getExecutionLines', 'instance', 'must be given once, as an instance id');
        return namespace.executionLines(jobName, id, instance);
      });
    }

    @Get('api/servers')
    @Header('Cache-Control', 'no-store')
    servers(@Registry() registry: unknown) {
      return answer(this.ns(registry).operator.getAllServersBriefInfo());
    }

    /**
     * Executions, newest first: `job`, `item`, `instance` (an instance id or a server IP), `result` (`success`,
     * `failure`, `running`), `from` and `to` (ISO instants, on the start time), `offset`, `limit` (1..500, default 50).
     * From the tracing store when the console has one, else from every instance's in-memory log.
     */
    @Get('api/executions')
    @Header('Cache-Control', 'no-store')
    async executions(
      @Req() request: ConsoleRequest,
      @Registry() registry: unknown,
      @Query('job') job?: unknown,
      @Query('item') item?: unknown,
      @Query('instance') instance?: unknown,
      @Query('result') result?: unknown,
      @Query('from') from?: unknown,
      @Query('to') to?: unknown,
      @Query('offset') offset?: unknown,
      @Query('limit') limit?: unknown,
    ) {
      refuseCrossSite(request);
      const query = executionQuery('executions', { job, item, instance, result, from, to, offset, limit }, 50);
      return this.readExecutions(this.ns(registry), query);
    }

    /** The latest failed items (`job`, `limit` 1..500, default 20), with their errors and stacks. */
    @Get('api/failures')
    @Header('Cache-Control', 'no-store')
    async failures(
      @Req() request: ConsoleRequest,
      @Registry() registry: unknown,
      @Query('job') job?: unknown,
      @Query('limit') limit?: unknown,
    ) {
      refuseCrossSite(request);
      return this.readExecutions(this.ns(registry), executionQuery('failures', { job, limit, result: 'failure' }, 20));
    }

    private async readExecutions(namespace: ConsoleNamespace, query: ExecutionHistoryQuery) {
      try {
        return { enabled: true, ...(await namespace.executions(query)) };
      } catch (error) {
        if (namespace.historySource === 'cluster') throw httpError(error);
        // The store's trouble (a database away, a slow query) is not the console's: said as such.
        throw httpError(
          new DependencyUnavailableError(
            'the execution history',
            `the execution history could not be read: ${describeError(error)}`,
            { cause: error },
          ),
        );
      }
    }

    /** A cron as a job would read it: its stored (Quartz) form and next fire times, or the job's refusal (400). */
    @Get('api/cron')
    @Header('Cache-Control', 'no-store')
    cron(@Query('expression') expression?: unknown, @Query('timeZone') timeZone?: unknown) {
      return answer(async () => {
        const cron = text(expression, 'expression') ?? '';
        const zone = text(timeZone, 'timeZone') || undefined;
        const described = describeCron(cron, { ...(zone === undefined ? {} : { timeZone: zone }), count: 5 });
        return {
          cron: described.cron,
          quartz: described.quartz,
          timeZone: described.timeZone,
          nextFireTimes: described.nextFireTimes.map((time) => time.toISOString()),
          shown: formatFireTimes(described.nextFireTimes, described.timeZone),
        };
      });
    }

    @Sse('api/changes')
    changes(@Registry() registry: unknown): Observable<MessageEvent> {
      const namespace = this.ns(registry);
      // Ended when the app shuts down: the HTTP server's close waits for open connections, this one included.
      return merge(
        this.state.listen(namespace).pipe(map((change) => ({ data: change }))),
        interval(HEARTBEAT_MS).pipe(map(() => ({ data: { type: 'heartbeat' } }))),
      ).pipe(takeUntil(this.state.stopping));
    }
  }
  return ElasticJobConsoleController;
}
