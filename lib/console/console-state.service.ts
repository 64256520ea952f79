import { randomBytes } from 'node:crypto';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Observable, Subject, takeUntil } from 'rxjs';
import { ELASTIC_JOB_MODULE_OPTIONS } from '../elastic-job.module-definition.js';
import { ElasticJobRegistry } from '../elastic-job.registry.js';
import type { ElasticJobModuleOptions } from '../interfaces/module-options.interface.js';
import {
  describeError,
  InvalidOperationError,
  JobConfigurationError,
  JobNotFoundError,
  quoteInput,
} from '../errors/elastic-job.errors.js';
import { ElasticJobEventBus } from '../events/elastic-job-event-bus.js';
import type { ExecutionHistory } from '../interfaces/execution-history.interface.js';
import type { JobConfiguration } from '../job/config/job-configuration.js';
import { isSecretProp } from '../job/alerts/alert-props.js';
import { ElasticJobOperator } from '../lifecycle/elastic-job-operator.js';
import type { JobConfigurationChanges } from '../lifecycle/job-configuration.api.js';
import { ZookeeperRegistryCenter } from '../registry/zookeeper-registry-center.js';
import { ConsoleNamespace } from './console-namespace.js';
import {
  APP_REGISTRY,
  CONSOLE_OPTIONS,
  type ConsoleRegistryOption,
  type ResolvedConsoleOptions,
} from './console-options.js';
import type {
  ConsoleChange,
  ConsoleExecutions,
  ConsoleJobDetail,
  ConsoleJobRow,
  ConsoleJobsPage,
} from './model/console-model.js';

export type { ConsoleChange, ConsoleExecutions, ConsoleJobDetail, ConsoleJobRow, ConsoleJobsPage };

/** A registry as `GET api/registries` lists it. */
export interface ConsoleRegistryInfo {
  name: string;
  namespace: string;
  /** The app's own (`app`), or one of the console's `registries`. */
  own: boolean;
  /** Whether the page may act on it. */
  actions: boolean;
}

/**
 * The console's namespaces: the app's own (over the app's ElasticJobOperator) and each of `registries` (a session
 * of the console's, opened when first asked), each a ConsoleNamespace (console-namespace.ts) with its rows, watch and
 * live changes. This service finds them for the routes, writes configuration changes with their audit, and ends
 * every live stream at shutdown.
 */
@Injectable()
export class ConsoleStateService implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('ElasticJob:console');
  /** Ends every live stream before the HTTP server closes: it waits for open connections, an SSE one included. */
  private readonly shuttingDown = new Subject<void>();
  /** Emits once, when the app begins to shut down: every live stream ends on it. */
  readonly stopping: Observable<void> = this.shuttingDown.asObservable();
  private readonly namespaces = new Map<string, ConsoleNamespace>();
  private eventBus: ElasticJobEventBus | undefined;
  private instanceId = '';
  private closed = false;

  constructor(
    @Inject(CONSOLE_OPTIONS) readonly options: ResolvedConsoleOptions,
    @Inject(ModuleRef) private readonly moduleRef: ModuleRef,
  ) {}

  /** The app's operator API (ElasticJobModule's), found wherever the app imports it. */
  get operator(): ElasticJobOperator {
    return this.namespace(undefined).operator;
  }

  onModuleInit(): void {
    let operator: ElasticJobOperator;
    try {
      operator = this.moduleRef.get(ElasticJobOperator, { strict: false });
    } catch {
      throw new JobConfigurationError(
        undefined,
        'console',
        'ElasticJobConsoleModule needs ElasticJobModule in the same app: import ElasticJobModule.forRoot() too',
        'ElasticJobConsoleModule',
      );
    }
    // Both come with ElasticJobModule, found above: the audit event goes where the app's jobs publish theirs.
    this.eventBus = this.moduleRef.get(ElasticJobEventBus, { strict: false });
    this.instanceId = this.moduleRef.get(ElasticJobRegistry, { strict: false }).instanceId;
    const history = this.findHistory();
    this.namespaces.set(
      APP_REGISTRY,
      new ConsoleNamespace(
        { name: APP_REGISTRY, operator, actions: this.options.actions, ...(history ? { history } : {}) },
        this.logger,
      ),
    );
    for (const entry of this.options.registries) this.namespaces.set(entry.name, this.remote(entry));
  }

  beforeApplicationShutdown(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    this.shuttingDown.next();
    this.shuttingDown.complete();
    return Promise.all([...this.namespaces.values()].map((namespace) => namespace.close())).then(() => undefined);
  }

  onApplicationShutdown(): Promise<void> {
    return this.beforeApplicationShutdown(); // idempotent; for apps whose shutdown skips the first hook
  }

  /** A fresh token for a page: sent back with its actions, beside the cookie the page is given (double submit). */
  newCsrfToken(): string {
    return randomBytes(24).toString('base64url');
  }

  /**
   * The namespace a request names with `?registry=` (the app's own when absent); an InvalidOperationError naming the
   * known ones otherwise.
   */
  namespace(name: string | undefined): ConsoleNamespace {
    const found = this.namespaces.get(name === undefined || name === '' ? APP_REGISTRY : name);
    if (found) return found;
    throw new InvalidOperationError(
      'console',
      'registry',
      `no registry ${quoteInput(name)}; the console has ${[...this.namespaces.keys()].join(', ')} (GET api/registries)`,
    );
  }

  registries(): ConsoleRegistryInfo[] {
    return [...this.namespaces.values()].map((namespace) => ({
      name: namespace.name,
      namespace:
        namespace.name === APP_REGISTRY
          ? this.appNamespaceName()
          : this.options.registries.find((entry) => entry.name === namespace.name)!.namespace,
      own: namespace.name === APP_REGISTRY,
      actions: namespace.actions,
    }));
  }

  /** The live changes of one namespace, for one page, ended at shutdown. */
  listen(namespace: ConsoleNamespace): Observable<ConsoleChange> {
    if (this.closed) return new Observable((subscriber) => subscriber.complete());
    return namespace.listen().pipe(takeUntil(this.shuttingDown));
  }

  /**
   * Writes a configuration change (validated as `@ShardedJob()` options, written as ElasticJob's
   * JobConfigurationAPI writes it), then tells who changed what: a log line and a `config.changed` event.
   */
  async updateConfiguration(
    namespace: ConsoleNamespace,
    jobName: string,
    changes: JobConfigurationChanges,
    by: string | undefined,
  ): Promise<{ configuration: JobConfiguration; changed: Record<string, { before: unknown; after: unknown }> }> {
    const before = await namespace.operator.getJobConfiguration(jobName);
    if (before === undefined) throw new JobNotFoundError(jobName);
    const configuration = await namespace.operator.updateJobConfiguration(jobName, changes);
    const changed: Record<string, { before: unknown; after: unknown }> = {};
    for (const field of Object.keys(changes) as Array<keyof JobConfigurationChanges>) {
      // props is a map: compared by content. Secrets read masked either side: one sent other than as shown changed.
      const differs =
        field === 'props'
          ? JSON.stringify(before.props) !== JSON.stringify(configuration.props) ||
            Object.entries(changes.props ?? {}).some(
              ([prop, value]) => isSecretProp(prop) && value !== before.props[prop],
            )
          : before[field] !== configuration[field];
      if (differs) changed[field] = { before: before[field], after: configuration[field] };
    }
    namespace.touched(jobName);
    if (Object.keys(changed).length > 0) {
      const fields = Object.entries(changed)
        .map(([field, { before: was, after: is }]) => `${field} ${JSON.stringify(was)} -> ${JSON.stringify(is)}`)
        .join(', ');
      const where = namespace.name === APP_REGISTRY ? '' : ` (registry ${namespace.name})`;
      new Logger(`ElasticJob:${jobName}`).log(
        `configuration changed in the console${where} by ${by ?? 'an unnamed user'}: ${fields}`,
      );
      this.eventBus?.publish({
        type: 'config.changed',
        jobName,
        instanceId: this.instanceId,
        at: new Date(),
        by,
        via: 'console',
        ...(namespace.name === APP_REGISTRY ? {} : { registry: namespace.name }),
        changes: changed,
      });
    }
    return { configuration, changed };
  }

  private appNamespaceName(): string {
    const options = this.moduleRef.get<ElasticJobModuleOptions>(ELASTIC_JOB_MODULE_OPTIONS, { strict: false });
    return options.zookeeper?.namespace ?? '';
  }

  /** Another registry: a session of the console's own, opened by the first request that needs it. */
  private remote(entry: ConsoleRegistryOption): ConsoleNamespace {
    const registry = new ZookeeperRegistryCenter({
      serverLists: entry.serverLists,
      namespace: entry.namespace,
      ...(entry.digest === undefined ? {} : { digest: entry.digest }),
    });
    let started: Promise<boolean> | undefined;
    const operator = ElasticJobOperator.over(async () => {
      // A failed start is tried again by the next request (not remembered as failed for good).
      started ??= registry.start().catch((error: unknown) => {
        started = undefined;
        throw error;
      });
      await started;
      return registry;
    }, registry.settings.connectionTimeoutMilliseconds);
    return new ConsoleNamespace(
      {
        name: entry.name,
        operator,
        actions: this.options.actions && entry.actions === true,
        release: () => registry.close(),
      },
      this.logger,
    );
  }

  private findHistory(): ExecutionHistory | undefined {
    const token = this.options.executionHistory;
    if (token === undefined) return undefined;
    let history: unknown;
    try {
      history = this.moduleRef.get(token, { strict: false });
    } catch (error) {
      throw new JobConfigurationError(
        undefined,
        'console.executionHistory',
        `no provider ${String(typeof token === 'function' ? token.name : token)} in the app (${describeError(error)}): ` +
          'add postgresTracing() or mysqlTracing() to the providers of the module that imports the console',
        'ElasticJobConsoleModule',
      );
    }
    if (typeof (history as ExecutionHistory | undefined)?.recentExecutions !== 'function')
      throw new JobConfigurationError(
        undefined,
        'console.executionHistory',
        'the provider has no recentExecutions(query) method (ExecutionHistory)',
        'ElasticJobConsoleModule',
      );
    return history as ExecutionHistory;
  }
}
