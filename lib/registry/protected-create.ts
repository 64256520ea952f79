import { randomUUID } from 'node:crypto';
import { RegistryError, registryErrorCode } from '../errors/elastic-job.errors.js';
import type { RegistryCenter } from './registry-center.js';

/** What the recipe needs of a registry center (ours, or a test's fake), and whether it is still open. */
export type ProtectedCreateTarget = Pick<
  RegistryCenter,
  'getChildren' | 'create' | 'createContainer' | 'remove' | 'ensurePath' | 'waitForConnection' | 'getSessionId'
> & { isOpen(): boolean };

/**
 * Curator's protected-mode EPHEMERAL_SEQUENTIAL create (docs/reference/zookeeper.md §1.7): the name carries
 * `_c_{uuid}-`, so after a connection loss we find our node instead of creating a second one, and a node left by
 * a dead session is deleted, never adopted. A missing parent is created as a container, as Curator's
 * `creatingParentContainersIfNeeded` makes it (the server reaps it once empty, maybe between our calls), its own
 * parents persistent. Returns the created path.
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
  let answerLost = false;
  for (;;) {
    if (!registry.isOpen()) throw new RegistryError('CLOSED', parent, 'registry center closed');
    if (Date.now() > deadline)
      throw new RegistryError('OPERATION_TIMEOUT', parent, `could not create a protected node under ${parent} in time`);
    if (answerLost) {
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
      // NO_NODE: nothing was created, make the parent and create again. A lost answer: look first.
      answerLost = code !== 'NO_NODE';
      if (code === 'NO_NODE') await ensureContainer(registry, parent).catch(() => undefined);
      else if (code !== 'CONNECTION_LOSS' && code !== 'SESSION_EXPIRED') throw error;
    }
  }
}

/** The parent as a container (a peer's, or one the server reaped and a peer made again, will do); its parents persistent. */
async function ensureContainer(registry: ProtectedCreateTarget, path: string): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      return await registry.createContainer(path);
    } catch (error) {
      const code = registryErrorCode(error);
      if (code === 'NODE_EXISTS') return;
      if (code !== 'NO_NODE' || attempt > 0) throw error;
      await registry.ensurePath(path.slice(0, path.lastIndexOf('/')) || '/');
    }
  }
}
