import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleDestroy,
} from '@nestjs/common';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS } from './elastic-job.constants.js';
import { ElasticJobExplorer } from './elastic-job.explorer.js';
import { ELASTIC_JOB_MODULE_OPTIONS } from './elastic-job.module-definition.js';
import { describeError, JobConfigurationError } from './errors/elastic-job.errors.js';
import type { ElasticJobModuleOptions } from './interfaces/module-options.interface.js';
import { JobScheduler } from './job/job-scheduler.js';
import { ZookeeperRegistryCenter } from './registry/zookeeper-registry-center.js';
import { nodeNameProblem, parseServerLists, RESERVED_ROOT_NODE } from './registry/zookeeper-names.js';
import { detectLocalIp, IPV4_PATTERN } from './util/local-ip.js';

/** Validates the module options; throws JobConfigurationError naming the field. */
export function validateModuleOptions(options: ElasticJobModuleOptions): void {
  function fail(field: string, detail: string): never {
    throw new JobConfigurationError(undefined, field, detail);
  }
  if (!options || typeof options !== 'object') fail('options', 'ElasticJobModule.forRoot() needs an options object');
  const zk = options.zookeeper;
  if (!zk || typeof zk !== 'object') fail('zookeeper', 'is required: { serverLists, namespace }');
  const servers = typeof zk.serverLists === 'string' ? parseServerLists(zk.serverLists) : 'it is not a string';
  if (typeof servers === 'string') {
    fail(
      'zookeeper.serverLists',
      `must be "host:port[,host:port...][/chroot]" with ports in 1..65535: ${servers} (got ` +
        `${JSON.stringify(zk.serverLists)})`,
    );
  }
  const namespaceProblem = typeof zk.namespace === 'string' ? nodeNameProblem(zk.namespace) : 'is not a string';
  if (namespaceProblem)
    fail(
      'zookeeper.namespace',
      `must be one ZooKeeper node name: it ${namespaceProblem} (got ${JSON.stringify(zk.namespace)})`,
    );
  if (zk.namespace === RESERVED_ROOT_NODE && servers.chroot === '') {
    fail(
      'zookeeper.namespace',
      `'${RESERVED_ROOT_NODE}' is ZooKeeper's own subtree (quotas, cluster config): choose another namespace`,
    );
  }
  for (const field of [
    'sessionTimeoutMilliseconds',
    'connectionTimeoutMilliseconds',
    'baseSleepTimeMilliseconds',
    'maxSleepTimeMilliseconds',
  ] as const) {
    const value = zk[field];
    if (value !== undefined && (!Number.isInteger(value) || value <= 0))
      fail(`zookeeper.${field}`, `must be a positive integer, got ${JSON.stringify(value)}`);
  }
  if (zk.maxRetries !== undefined && (!Number.isInteger(zk.maxRetries) || zk.maxRetries < 0))
    fail('zookeeper.maxRetries', `must be an integer >= 0, got ${JSON.stringify(zk.maxRetries)}`);
  if (zk.digest !== undefined && (typeof zk.digest !== 'string' || !/^[^:]+:.+$/.test(zk.digest)))
    fail('zookeeper.digest', 'must be "user:password"');
  if (options.instance?.ip !== undefined && !IPV4_PATTERN.test(options.instance.ip))
    fail('instance.ip', `must be an IPv4 address, got ${JSON.stringify(options.instance.ip)}`);
  const timeout = options.shutdownTimeoutMilliseconds;
  if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 0))
    fail('shutdownTimeoutMilliseconds', `must be an integer >= 0, got ${JSON.stringify(timeout)}`);
}

/**
 * Starts and stops every job of the app. Bootstrap: one ZooKeeper session, conflict checks for all jobs (reads
 * only), then every job registers concurrently. Shutdown: jobs drain and deregister in `onModuleDestroy`; the
 * session closes in `onApplicationShutdown`.
 */
@Injectable()
export class ElasticJobOrchestrator implements OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown {
  private readonly logger = new Logger('ElasticJob');
  private registry: ZookeeperRegistryCenter | undefined;
  private readonly schedulers = new Map<string, JobScheduler>();

  constructor(
    @Inject(ELASTIC_JOB_MODULE_OPTIONS) private readonly options: ElasticJobModuleOptions,
    private readonly explorer: ElasticJobExplorer,
  ) {}

  get jobs(): ReadonlyMap<string, JobScheduler> {
    return this.schedulers;
  }

  get registryCenter(): ZookeeperRegistryCenter | undefined {
    return this.registry;
  }

  async onApplicationBootstrap(): Promise<void> {
    validateModuleOptions(this.options);
    const definitions = this.explorer.jobs;
    if (definitions.length === 0) {
      this.logger.warn('no @ShardedJob() methods found; not connecting to ZooKeeper');
      return;
    }
    const registry = new ZookeeperRegistryCenter(this.options.zookeeper);
    const zk = registry.settings;
    this.registry = registry;
    const identity = { ip: this.options.instance?.ip ?? detectLocalIp(), pid: process.pid };
    const settings = {
      waitTimeoutMs: Math.max(10_000, 2 * zk.sessionTimeoutMilliseconds),
      baseSleepTimeMs: zk.baseSleepTimeMilliseconds,
      maxSleepTimeMs: zk.maxSleepTimeMilliseconds,
      maxRetries: zk.maxRetries,
      shutdownTimeoutMs: this.options.shutdownTimeoutMilliseconds ?? DEFAULT_SHUTDOWN_TIMEOUT_MS,
    };
    for (const definition of definitions) {
      this.schedulers.set(definition.config.jobName, new JobScheduler(definition, registry, identity, settings));
    }
    const connected = await registry.start();
    if (!connected) {
      // ZooKeeper trouble never stops the app: register as soon as it answers.
      const unsubscribe = registry.onStateChange((change) => {
        if (change.state !== 'CONNECTED') return;
        unsubscribe();
        void this.registerAll().catch((error: unknown) =>
          this.logger.error(`job registration failed: ${describeError(error)}`),
        );
      });
      return;
    }
    try {
      await this.registerAll();
    } catch (error) {
      await this.shutdownAll(0);
      await registry.close();
      throw error;
    }
  }

  private async registerAll(): Promise<void> {
    const schedulers = [...this.schedulers.values()];
    // Conflicts first, for every job, so that nothing is written when one job is misconfigured.
    await Promise.all(schedulers.map((scheduler) => scheduler.checkConflict()));
    // A job that could not register yet retries in the background (its status says so); only what no retry
    // can mend is thrown.
    const results = await Promise.allSettled(schedulers.map((scheduler) => scheduler.register()));
    const failed = results.flatMap((result, index) =>
      result.status === 'rejected' ? [[schedulers[index]!.jobName, result.reason] as const] : [],
    );
    for (const [jobName, reason] of failed) {
      this.logger.error(`job '${jobName}' could not register: ${describeError(reason)}`);
    }
    const registered = schedulers.filter((scheduler) => scheduler.isRegistered).length;
    this.logger.log(
      `${registered} of ${schedulers.length} job(s) ` +
        `registered${registered < schedulers.length - failed.length ? '; the others retry in the background' : ''}`,
    );
  }

  async onModuleDestroy(): Promise<void> {
    await this.shutdownAll(this.options.shutdownTimeoutMilliseconds ?? DEFAULT_SHUTDOWN_TIMEOUT_MS);
  }

  private async shutdownAll(timeoutMs: number): Promise<void> {
    await Promise.all([...this.schedulers.values()].map((scheduler) => scheduler.shutdown(timeoutMs)));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.shutdownAll(0); // no-op when onModuleDestroy ran
    await this.registry?.close();
  }
}
