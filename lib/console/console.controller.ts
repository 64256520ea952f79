import {
  BadRequestException,
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
  Query,
  Req,
  ServiceUnavailableException,
  Sse,
  type Type,
  UseGuards,
} from '@nestjs/common';
import { interval, map, merge, type Observable } from 'rxjs';
import { InvalidOperationError, JobNotFoundError, RegistryError } from '../errors/elastic-job.errors.js';
import type { ElasticJobOperator } from '../lifecycle/elastic-job-operator.js';
import type { ResolvedConsoleOptions } from './console-options.js';
import { ConsoleActionGuard } from './console-action.guard.js';
import { ConsoleStateService } from './console-state.service.js';
import { CONSOLE_SCRIPT, CONSOLE_STYLE, consoleHtml } from './page/console-page.js';

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

/** Keeps proxies from closing a quiet live stream. */
const HEARTBEAT_MS = 25_000;
const MAX_PAGE = 200;
const PAST = { disable: 'disabled', enable: 'enabled', shutdown: 'shut down' } as const;

function integer(value: string | undefined, field: string, fallback: number, min: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new BadRequestException(`${field} must be an integer ${min}..${max}, got '${value}'`);
  return n;
}

/** The library's errors as HTTP answers: the message (which names the job and says what to do) kept. */
async function answer<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof JobNotFoundError) throw new NotFoundException(error.message);
    if (error instanceof InvalidOperationError) throw new BadRequestException(error.message);
    if (error instanceof RegistryError) throw new ServiceUnavailableException(error.message);
    throw error;
  }
}

function pageHeaders(): MethodDecorator {
  return (target, key, descriptor) => {
    for (const [name, value] of PAGE_HEADERS) Header(name, value)(target, key, descriptor);
  };
}

/**
 * The console's routes under its path, guarded by the app's guard (all of them) and the action guard (the POSTs).
 * Made per forRoot() because a controller's path and guards are set by decorators.
 */
export function createConsoleController(options: ResolvedConsoleOptions): Type<unknown> {
  const guards: Array<Type<CanActivate> | CanActivate> = options.guard === undefined ? [] : [options.guard];

  @Controller(options.path)
  @UseGuards(...guards)
  class ElasticJobConsoleController {
    constructor(@Inject(ConsoleStateService) private readonly state: ConsoleStateService) {}

    private get operator(): ElasticJobOperator {
      return this.state.operator;
    }

    @Get()
    @Header('Content-Type', 'text/html; charset=utf-8')
    @Header('Cache-Control', 'no-store')
    @pageHeaders()
    page(@Req() request: { originalUrl?: string; url?: string }): string {
      // The path the browser asked for, the app's global prefix included (express: originalUrl; fastify: url).
      const asked = (request.originalUrl ?? request.url ?? `/${options.path}`).split(/[?#]/)[0]!;
      return consoleHtml({
        base: asked.replace(/\/+$/, ''),
        title: this.state.options.title,
        csrfToken: this.state.csrfToken,
        actions: this.state.options.actions,
        history: this.state.hasHistory,
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
      @Query('name') name?: string,
      @Query('status') status?: string,
      @Query('offset') offset?: string,
      @Query('limit') limit?: string,
    ) {
      return answer(
        this.state.jobs({
          ...(name === undefined ? {} : { name }),
          ...(status === undefined || status === '' ? {} : { status }),
          offset: integer(offset, 'offset', 0, 0, Number.MAX_SAFE_INTEGER),
          limit: integer(limit, 'limit', 50, 1, MAX_PAGE),
        }),
      );
    }

    @Get('api/jobs/:name')
    @Header('Cache-Control', 'no-store')
    async job(@Param('name') name: string) {
      const detail = await answer(this.state.job(name));
      if (detail === undefined) throw new NotFoundException(`No job named '${name}' in this namespace`);
      return detail;
    }

    @Get('api/servers')
    @Header('Cache-Control', 'no-store')
    servers() {
      return answer(this.operator.getAllServersBriefInfo());
    }

    @Get('api/executions')
    @Header('Cache-Control', 'no-store')
    async executions(@Query('job') job?: string, @Query('limit') limit?: string) {
      const executions = await this.state.executions({
        ...(job === undefined || job === '' ? {} : { jobName: job }),
        limit: integer(limit, 'limit', 50, 1, 500),
      });
      return { enabled: executions !== undefined, executions: executions ?? [] };
    }

    @Sse('api/changes')
    changes(): Observable<MessageEvent> {
      return merge(
        this.state.listen().pipe(map((change) => ({ data: change }))),
        interval(HEARTBEAT_MS).pipe(map(() => ({ data: { type: 'heartbeat' } }))),
      );
    }

    // ------------------------------------------------------------------ actions (ConsoleActionGuard)

    @Post('api/jobs/:name/trigger')
    @HttpCode(200)
    @UseGuards(ConsoleActionGuard)
    async trigger(@Param('name') name: string, @Body() body: { jobParameter?: unknown } | undefined) {
      const jobParameter = body?.jobParameter;
      if (jobParameter !== undefined && typeof jobParameter !== 'string')
        throw new BadRequestException('jobParameter must be a string');
      const instances = await answer(this.operator.trigger(name, jobParameter === undefined ? {} : { jobParameter }));
      return { done: `triggered on ${instances.length} instance(s)`, instances };
    }

    @Post('api/jobs/:name/:action')
    @HttpCode(200)
    @UseGuards(ConsoleActionGuard)
    async jobAction(@Param('name') name: string, @Param('action') action: string) {
      if (action !== 'disable' && action !== 'enable' && action !== 'shutdown')
        throw new NotFoundException(`No job action '${action}': disable, enable, shutdown or trigger`);
      const nodes = await answer(this.operator[action]({ jobName: name }));
      this.state.touched(name);
      return { done: `${PAST[action]} ${name} on ${nodes.length} node(s)` };
    }

    @Post('api/jobs/:name/items/:item/:action')
    @HttpCode(200)
    @UseGuards(ConsoleActionGuard)
    async itemAction(@Param('name') name: string, @Param('item') item: string, @Param('action') action: string) {
      const index = integer(item, 'item', 0, 0, Number.MAX_SAFE_INTEGER);
      if (action === 'disable') await answer(this.operator.disableItem(name, index));
      else if (action === 'enable') await answer(this.operator.enableItem(name, index));
      else throw new NotFoundException(`No item action '${action}': disable or enable`);
      this.state.touched(name);
      return { done: `${PAST[action]} item ${index} of ${name}` };
    }

    @Post('api/jobs/:name/servers/:ip/:action')
    @HttpCode(200)
    @UseGuards(ConsoleActionGuard)
    async jobServerAction(@Param('name') name: string, @Param('ip') ip: string, @Param('action') action: string) {
      if (action !== 'disable' && action !== 'enable' && action !== 'shutdown')
        throw new NotFoundException(`No server action '${action}': disable, enable or shutdown`);
      const nodes = await answer(this.operator[action]({ jobName: name, serverIp: ip }));
      this.state.touched(name);
      return { done: `${PAST[action]} ${name} on ${ip} (${nodes.length} node(s))` };
    }

    @Post('api/servers/:ip/:action')
    @HttpCode(200)
    @UseGuards(ConsoleActionGuard)
    async serverAction(@Param('ip') ip: string, @Param('action') action: string) {
      if (action !== 'disable' && action !== 'enable')
        throw new NotFoundException(`No server action '${action}': disable or enable`);
      const nodes = await answer(this.operator[action]({ serverIp: ip }));
      this.state.touched(undefined);
      return { done: `${PAST[action]} ${ip} in every job (${nodes.length} node(s))` };
    }
  }
  return ElasticJobConsoleController;
}
