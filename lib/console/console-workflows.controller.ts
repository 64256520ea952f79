import {
  Body,
  type CanActivate,
  Controller,
  Get,
  Header,
  HttpCode,
  Inject,
  Param,
  Post,
  type Type,
  UseGuards,
} from '@nestjs/common';
import { InvalidOperationError, quoteInput } from '../errors/elastic-job.errors.js';
import { checkKeys, checkWorkflowNode } from '../lifecycle/operator-input.js';
import type { ResolvedConsoleOptions } from './console-options.js';
import { ConsoleActionGuard } from './console-action.guard.js';
import type { ConsoleNamespace } from './console-namespace.js';
import { ConsoleStateService } from './console-state.service.js';
import { answer, namespaceOf, Registry } from './console-request.js';
import { CONSOLE_WORKFLOW_RUNS, type ConsoleWorkflow, workflowLayers } from './model/workflow-model.js';

/**
 * The console's workflow routes (docs/guide/workflows.md, "In the console"), beside the job routes under the same
 * path and guards (console.controller.ts), answered from the operator API: the workflows with their latest runs, all
 * runs kept of one, and the operator's verbs on them behind the action guard.
 */
export function createWorkflowsController(options: ResolvedConsoleOptions): Type<unknown> {
  const guards: Array<Type<CanActivate> | CanActivate> = options.guard === undefined ? [] : [options.guard];

  @Controller(options.path)
  @UseGuards(...guards)
  class ElasticJobConsoleWorkflowsController {
    constructor(@Inject(ConsoleStateService) private readonly state: ConsoleStateService) {}

    private ns(registry: unknown): ConsoleNamespace {
      return namespaceOf(this.state, registry);
    }

    /** Every workflow of the namespace with its DAG's layers and its latest runs. */
    @Get('api/workflows')
    @Header('Cache-Control', 'no-store')
    workflows(@Registry() registry: unknown) {
      const { operator } = this.ns(registry);
      return answer(async (): Promise<ConsoleWorkflow[]> => {
        const definitions = await operator.getWorkflows();
        return Promise.all(
          definitions.map(async (definition) => {
            const steps = Object.fromEntries(
              Object.entries(definition.steps).map(([step, parents]) => [step, [...parents]]),
            );
            const runs = await operator.getWorkflowRuns(definition.name, { limit: CONSOLE_WORKFLOW_RUNS });
            return {
              name: definition.name,
              cron: definition.cron,
              timeZone: definition.timeZone,
              steps,
              layers: workflowLayers(steps),
              runs,
            };
          }),
        );
      });
    }

    /** Every run kept of one workflow, newest first. */
    @Get('api/workflows/:name/runs')
    @Header('Cache-Control', 'no-store')
    runs(@Param('name') name: string, @Registry() registry: unknown) {
      const { operator } = this.ns(registry);
      return answer(() => operator.getWorkflowRuns(name));
    }

    // ------------------------------------------------------------------ actions (ConsoleActionGuard)

    @Post('api/workflows/:name/trigger')
    @HttpCode(200)
    @UseGuards(ConsoleActionGuard)
    trigger(@Param('name') name: string, @Registry() registry: unknown) {
      const { operator } = this.ns(registry);
      return answer(async () => {
        const runId = await operator.triggerWorkflow(name);
        return { done: `started run ${runId} of ${name}`, runId };
      });
    }

    /** Body `{ items?: 'failed' | 'all' }` (default: its failed items). */
    @Post('api/workflows/:name/runs/:runId/steps/:job/rerun')
    @HttpCode(200)
    @UseGuards(ConsoleActionGuard)
    rerun(
      @Param('name') name: string,
      @Param('runId') runId: string,
      @Param('job') job: string,
      @Body() body: unknown,
      @Registry() registry: unknown,
    ) {
      const { operator } = this.ns(registry);
      return answer(async () => {
        checkWorkflowNode(name, 'rerunWorkflowStep', 'name');
        if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body)))
          throw new InvalidOperationError('rerunWorkflowStep', 'body', `must be { items? }, got ${quoteInput(body)}`);
        if (body) checkKeys(body, ['items'], 'rerunWorkflowStep');
        const items = (body as { items?: 'failed' | 'all' } | null)?.items;
        const run = await operator.rerunWorkflowStep(name, runId, job, items === undefined ? {} : { items });
        const which = items === 'all' ? 'every item' : 'its failed items';
        return { done: `step ${job} of run ${run.id} runs again (${which})`, run };
      });
    }

    @Post('api/workflows/:name/runs/:runId/cancel')
    @HttpCode(200)
    @UseGuards(ConsoleActionGuard)
    cancel(@Param('name') name: string, @Param('runId') runId: string, @Registry() registry: unknown) {
      const { operator } = this.ns(registry);
      return answer(async () => {
        const run = await operator.cancelWorkflowRun(name, runId);
        return { done: `cancelled run ${run.id} of ${name}`, run };
      });
    }
  }
  return ElasticJobConsoleWorkflowsController;
}
