import {
  Body,
  type CanActivate,
  Controller,
  Get,
  Header,
  HttpCode,
  Inject,
  type MessageEvent,
  NotFoundException,
  Param,
  Post,
  Put,
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
import {
  checkItemNumber,
  checkJobName,
  checkJobParameter,
  checkKeys,
  checkServerIp,
} from '../lifecycle/operator-input.js';
import type { ExecutionHistoryQuery } from '../interfaces/execution-history.interface.js';
import { describeCron, formatFireTimes } from '../schedule/cron-preview.js';
import type { JobConfigurationChanges } from '../lifecycle/job-configuration.api.js';
import type { ConsoleRequest, ResolvedConsoleOptions } from './console-options.js';
import { ConsoleActionGuard, CSRF_COOKIE, csrfCookie } from './console-action.guard.js';
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
const PAST = { disable: 'disabled', enable: 'enabled', shutdown: 'shut down' } as const;

/**
 * What the console's configuration editor changes: ElasticJob-UI's editable fields. The others (sharding strategy,
 * error handler, overwrite, ...) belong to the code that declares the job.
 */
export const CONSOLE_EDITABLE_FIELDS = [
  'cron',
  'timeZone',
  'shardingTotalCount',
  'shardingItemParameters',
  'jobParameter',
  'description',
  'failover',
  'misfire',
  'monitorExecution',
  'maxTimeDiffSeconds',
  'props',
] as const satisfies ReadonlyArray<keyof JobConfigurationChanges>;

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

    // ------------------------------------------------------------------ actions (ConsoleActionGuard)

    @Post('api/jobs/:name/trigger')
    @HttpCode(200)
    @UseGuards(ConsoleActionGuard)
    async trigger(@Param('name') name: string, @Body() body: unknown, @Registry() registry: unknown) {
      const { operator } = this.ns(registry);
      return answer(async () => {
        const jobName = checkJobName(name, 'trigger');
        // A body is optional; when given, it is `{ jobParameter? }` and nothing else.
        if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body)))
          throw new InvalidOperationError('trigger', 'body', `must be { jobParameter? }, got ${quoteInput(body)}`);
        if (body) checkKeys(body, ['jobParameter'], 'trigger');
        const jobParameter = checkJobParameter((body as { jobParameter?: unknown } | null)?.jobParameter, 'trigger');
        const instances = await operator.trigger(jobName, jobParameter === undefined ? {} : { jobParameter });
        return { done: `triggered on ${instances.length} instance(s)`, instances };
      });
    }

    /**
     * Changes the fields given (CONSOLE_EDITABLE_FIELDS), validated as `@ShardedJob()` options: answers the stored
     * configuration and what changed, or a 400 naming the field with nothing written.
     */
    @Put('api/jobs/:name/config')
    @HttpCode(200)
    @UseGuards(ConsoleActionGuard)
    async updateConfig(
      @Param('name') name: string,
      @Body() body: unknown,
      @Req() request: ConsoleRequest,
      @Registry() registry: unknown,
    ) {
      const namespace = this.ns(registry);
      return answer(async () => {
        const jobName = checkJobName(name, 'updateJobConfiguration');
        if (typeof body !== 'object' || body === null || Array.isArray(body))
          throw new InvalidOperationError(
            'updateJobConfiguration',
            'body',
            `must be an object of the fields to change, got ${quoteInput(body)}`,
          );
        checkKeys(body, CONSOLE_EDITABLE_FIELDS, 'updateJobConfiguration');
        // JSON has no undefined: a null time zone is "none" (the instances' own zone).
        const given = body as Record<string, unknown>;
        if (given.timeZone === null) given.timeZone = undefined;
        const by = this.state.options.auditUser(request);
        const { configuration, changed } = await this.state.updateConfiguration(
          namespace,
          jobName,
          body as JobConfigurationChanges,
          by,
        );
        const fields = Object.keys(changed);
        return {
          done: fields.length ? `changed ${fields.join(', ')} of ${jobName}` : `nothing to change in ${jobName}`,
          configuration,
          changed,
        };
      });
    }

    @Post('api/jobs/:name/:action')
    @HttpCode(200)
    @UseGuards(ConsoleActionGuard)
    async jobAction(@Param('name') name: string, @Param('action') action: string, @Registry() registry: unknown) {
      const namespace = this.ns(registry);
      if (action !== 'disable' && action !== 'enable' && action !== 'shutdown')
        throw new NotFoundException(`No job action ${quoteInput(action)}: disable, enable, shutdown or trigger`);
      return answer(async () => {
        const nodes = await namespace.operator[action]({ jobName: checkJobName(name, action) });
        namespace.touched(name);
        return { done: `${PAST[action]} ${name} on ${nodes.length} node(s)` };
      });
    }

    /** Runs the item again now on its owner (the operator's rerunItem): answers which instance was asked. */
    @Post('api/jobs/:name/items/:item/rerun')
    @HttpCode(200)
    @UseGuards(ConsoleActionGuard)
    async rerunItem(@Param('name') name: string, @Param('item') item: string, @Registry() registry: unknown) {
      const { operator } = this.ns(registry);
      return answer(async () => {
        const jobName = checkJobName(name, 'rerunItem');
        if (!/^\d+$/.test(item))
          throw new InvalidOperationError('rerunItem', 'item', `must be an integer >= 0, got ${quoteInput(item)}`);
        const asked = await operator.rerunItem(jobName, checkItemNumber(Number(item), 'rerunItem'));
        return { done: `asked ${asked.instanceId} to run item ${asked.item} of ${jobName} again`, ...asked };
      });
    }

    @Post('api/jobs/:name/items/:item/:action')
    @HttpCode(200)
    @UseGuards(ConsoleActionGuard)
    async itemAction(
      @Param('name') name: string,
      @Param('item') item: string,
      @Param('action') action: string,
      @Registry() registry: unknown,
    ) {
      const namespace = this.ns(registry);
      if (action !== 'disable' && action !== 'enable')
        throw new NotFoundException(`No item action ${quoteInput(action)}: disable or enable`);
      const operation = `${action}Item`;
      return answer(async () => {
        const jobName = checkJobName(name, operation);
        if (!/^\d+$/.test(item))
          throw new InvalidOperationError(operation, 'item', `must be an integer >= 0, got ${quoteInput(item)}`);
        const index = checkItemNumber(Number(item), operation);
        if (action === 'disable') await namespace.operator.disableItem(jobName, index);
        else await namespace.operator.enableItem(jobName, index);
        namespace.touched(name);
        return { done: `${PAST[action]} item ${index} of ${name}` };
      });
    }

    @Post('api/jobs/:name/servers/:ip/:action')
    @HttpCode(200)
    @UseGuards(ConsoleActionGuard)
    async jobServerAction(
      @Param('name') name: string,
      @Param('ip') ip: string,
      @Param('action') action: string,
      @Registry() registry: unknown,
    ) {
      const namespace = this.ns(registry);
      if (action !== 'disable' && action !== 'enable' && action !== 'shutdown')
        throw new NotFoundException(`No server action ${quoteInput(action)}: disable, enable or shutdown`);
      return answer(async () => {
        const target = { jobName: checkJobName(name, action), serverIp: checkServerIp(ip, action, 'ip') };
        const nodes = await namespace.operator[action](target);
        namespace.touched(name);
        return { done: `${PAST[action]} ${name} on ${ip} (${nodes.length} node(s))` };
      });
    }

    @Post('api/servers/:ip/:action')
    @HttpCode(200)
    @UseGuards(ConsoleActionGuard)
    async serverAction(@Param('ip') ip: string, @Param('action') action: string, @Registry() registry: unknown) {
      const namespace = this.ns(registry);
      if (action !== 'disable' && action !== 'enable')
        throw new NotFoundException(`No server action ${quoteInput(action)}: disable or enable`);
      return answer(async () => {
        const nodes = await namespace.operator[action]({ serverIp: checkServerIp(ip, action, 'ip') });
        namespace.touched(undefined);
        return { done: `${PAST[action]} ${ip} in every job (${nodes.length} node(s))` };
      });
    }
  }
  return ElasticJobConsoleController;
}
