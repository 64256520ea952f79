import { randomUUID } from 'node:crypto';
import { RegistryError, registryErrorCode } from '../errors/elastic-job.errors.js';
import type { RegistryCenter } from './registry-center.js';

/** What the recipe needs of a registry center (ours, or a test's fake), and whether it is still open. */
export type ProtectedCreateTarget = Pick<
  RegistryCenter,
  'getChildren' | 'create' | 'remove' | 'ensurePath' | 'waitForConnection' | 'getSessionId'
> & { isOpen(): boolean };

/**
 * Curator's protected-mode EPHEMERAL_SEQUENTIAL create (docs/reference/zookeeper.md §1.7): the name carries
 * `_c_{uuid}-`, so after a connection loss we find our node instead of creating a second one, and a node left by
 * a dead session is deleted, never adopted. Missing parents are created (a Curator peer makes them containers,
 * which the server may reap between our calls). Returns the created path.
 */
export async function createProtectedEphemeralSequential(
  registry: ProtectedCreateTarget,
  parent: string,
  name: string,
  data: Buffer,
  deadline: number,
): Promise<string> {
  let uuid = randomUUID();
  let sessionId = registry.getSessionId();
  for (let attempt = 0; ; attempt++) {
    if (!registry.isOpen()) throw new RegistryError('CLOSED', parent, 'registry center closed');
    if (Date.now() > deadline)
      throw new RegistryError('OPERATION_TIMEOUT', parent, `could not create a protected node under ${parent} in time`);
    if (attempt > 0) {
      // The create may have succeeded with the answer lost: look for our node before creating again.
      if (!(await registry.waitForConnection(Math.max(1, deadline - Date.now())))) continue;
      const children = (await registry.getChildren(parent).catch(() => undefined)) ?? [];
      const found = children.find((child) => child.startsWith(`_c_${uuid}-`));
      if (found && sessionId === registry.getSessionId()) return `${parent}/${found}`;
      if (found) await registry.remove(`${parent}/${found}`).catch(() => undefined);
      if (sessionId !== registry.getSessionId()) {
        uuid = randomUUID();
        sessionId = registry.getSessionId();
      }
    }
    try {
      return await registry.create(`${parent}/_c_${uuid}-${name}`, data, 'EPHEMERAL_SEQUENTIAL');
    } catch (error) {
      const code = registryErrorCode(error);
      if (code === 'NO_NODE') await registry.ensurePath(parent).catch(() => undefined);
      else if (code !== 'CONNECTION_LOSS' && code !== 'SESSION_EXPIRED') throw error;
    }
  }
}
