import {
  Body,
  type CanActivate,
  Controller,
  HttpCode,
  Inject,
  NotFoundException,
  Param,
  Post,
  Put,
  Req,
  type Type,
  UseGuards,
} from '@nestjs/common';
import { InvalidOperationError, quoteInput } from '../errors/elastic-job.errors.js';
import type { JobConfigurationChanges } from '../lifecycle/job-configuration.api.js';
import {
  checkItemNumber,
  checkJobName,
  checkJobParameter,
  checkKeys,
  checkServerIp,
} from '../lifecycle/operator-input.js';
import type { ConsoleRequest, ResolvedConsoleOptions } from './console-options.js';
import { ConsoleActionGuard } from './console-action.guard.js';
import type { ConsoleNamespace } from './console-namespace.js';
import { ConsoleStateService } from './console-state.service.js';
import { answer, namespaceOf, Registry } from './console-request.js';

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

/**
 * The console's job and server actions (the operator's verbs), under the console's path and the app's guard (as
 * console.controller.ts), each behind the action guard too (ConsoleActionGuard: CSRF, same origin).
 */
export function createActionsController(options: ResolvedConsoleOptions): Type<unknown> {
  const guards: Array<Type<CanActivate> | CanActivate> = options.guard === undefined ? [] : [options.guard];

  @Controller(options.path)
  @UseGuards(...guards)
  class ElasticJobConsoleActionsController {
    constructor(@Inject(ConsoleStateService) private readonly state: ConsoleStateService) {}

    /** The namespace `?registry=` names; a 400 naming the known ones for another name. */
    private ns(registry: unknown): ConsoleNamespace {
      return namespaceOf(this.state, registry);
    }

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
  return ElasticJobConsoleActionsController;
}
