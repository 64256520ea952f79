import { type DynamicModule, Module } from '@nestjs/common';
import { ConsoleActionGuard } from './console-action.guard.js';
import { CONSOLE_OPTIONS, type ElasticJobConsoleOptions, resolveConsoleOptions } from './console-options.js';
import { ConsoleStateService } from './console-state.service.js';
import { createActionsController } from './console-actions.controller.js';
import { createConsoleController } from './console.controller.js';
import { createWorkflowsController } from './console-workflows.controller.js';

/**
 * The web console (docs/guide/console.md): a page and its JSON routes under `path` in the app's HTTP server, over the
 * operator API of the app's ElasticJobModule. Import it beside `ElasticJobModule.forRoot()` in an HTTP app.
 * @publicApi
 */
@Module({})
export class ElasticJobConsoleModule {
  static forRoot(options: ElasticJobConsoleOptions = {}): DynamicModule {
    const resolved = resolveConsoleOptions(options);
    return {
      module: ElasticJobConsoleModule,
      controllers: [
        createConsoleController(resolved),
        createActionsController(resolved),
        createWorkflowsController(resolved),
      ],
      providers: [{ provide: CONSOLE_OPTIONS, useValue: resolved }, ConsoleStateService, ConsoleActionGuard],
    };
  }
}
