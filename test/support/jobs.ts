import type { TestingModule } from '@nestjs/testing';
import { ElasticJobRegistry } from '../../lib/index.js';
import { ElasticJobOrchestrator } from '../../lib/elastic-job.orchestrator.js';
import type { ExecutionEvents } from '../../lib/job/events/execution-events.js';
import type { JobNodeStorage } from '../../lib/job/storage/job-node-storage.js';
import type { ZookeeperRegistryCenter } from '../../lib/registry/zookeeper-registry-center.js';
import { eventually } from './zk.js';

/**
 * What one job of a booted app sees of its tree (its TreeCache, through the job's storage): every decision of a
 * firing or a reaction is taken from it. Waiting until the cache shows a change proves the app has *seen* it, which
 * a read from another session does not.
 */
export function jobStorage(app: TestingModule, jobName: string): JobNodeStorage {
  const scheduler = app.get(ElasticJobOrchestrator).jobs.get(jobName);
  if (!scheduler) throw new Error(`no job '${jobName}' in this app`);
  return scheduler.ctx.storage;
}

/** The job's execution events on this app (firings and items started, completed, skipped). */
export function jobEvents(app: TestingModule, jobName: string): ExecutionEvents {
  const scheduler = app.get(ElasticJobOrchestrator).jobs.get(jobName);
  if (!scheduler) throw new Error(`no job '${jobName}' in this app`);
  return scheduler.events;
}

/** The app's own ZooKeeper session (to follow its connection states). */
export function appRegistryCenter(app: TestingModule): ZookeeperRegistryCenter {
  const registry = app.get(ElasticJobOrchestrator).registryCenter;
  if (!registry) throw new Error('the app has no registry center (not bootstrapped?)');
  return registry;
}

/**
 * Resolves once the job is between firings on this app, and calls `atThatMoment` in the same tick as the check
 * (so nothing can have started in between). Every firing that runs afterwards started after that moment, and
 * decides with what the job's cache held by then.
 */
export async function betweenFirings(
  app: TestingModule,
  jobName: string,
  atThatMoment: () => void = () => undefined,
  timeoutMs = 20_000,
): Promise<void> {
  const registry = app.get(ElasticJobRegistry);
  await eventually(
    () => {
      const firing = registry.getJobStatus(jobName).firing;
      if (!firing) atThatMoment();
      return firing;
    },
    (firing) => !firing,
    timeoutMs,
    `${jobName} between firings`,
  );
}

/**
 * Resolves once a firing of the job that started after this call has run to its end. The witness is the clock check
 * every firing writes first (`/{job}/systemTime/current`; the job needs `maxTimeDiffSeconds` >= 0): first the job is
 * seen between firings, then that node written again, then the job between firings again. Needs `zk`, a session on
 * the app's namespace.
 */
export async function aLaterFiringCompleted(
  app: TestingModule,
  zk: ZookeeperRegistryCenter,
  jobName: string,
  timeoutMs = 20_000,
): Promise<void> {
  const clock = `/${jobName}/systemTime/current`;
  await betweenFirings(app, jobName, () => undefined, timeoutMs);
  // Any write seen from here on is by a firing that started after the moment above.
  // (zxids as numbers: they fit, and eventually's timeout message cannot print a bigint.)
  const written = async (): Promise<number> => Number((await zk.exists(clock))?.mzxid ?? -1n);
  const before = await written();
  await eventually(written, (mzxid) => mzxid > before, timeoutMs, `a new firing of ${jobName} (its clock check)`);
  await betweenFirings(app, jobName, () => undefined, timeoutMs);
}
