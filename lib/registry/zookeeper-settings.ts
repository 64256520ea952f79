import type { ZookeeperConfiguration } from '../interfaces/module-options.interface.js';

/** ElasticJob's `ZookeeperConfiguration` defaults (its 0 timeouts mean Curator's 60 s session and 15 s connection). */
export const DEFAULT_ZOOKEEPER_SETTINGS = {
  sessionTimeoutMilliseconds: 60_000,
  connectionTimeoutMilliseconds: 15_000,
  baseSleepTimeMilliseconds: 1_000,
  maxSleepTimeMilliseconds: 3_000,
  maxRetries: 3,
} as const;

/** Every setting with its value: what the user gave, else the default. */
export type ZookeeperSettings = Required<Omit<ZookeeperConfiguration, 'digest'>> & { digest?: string };

/** The one place ZooKeeper option defaults are merged (an `undefined` option takes the default too). */
export function resolveZookeeperSettings(config: ZookeeperConfiguration): ZookeeperSettings {
  const given = Object.fromEntries(Object.entries(config).filter(([, value]) => value !== undefined));
  return { ...DEFAULT_ZOOKEEPER_SETTINGS, ...given } as ZookeeperSettings;
}
