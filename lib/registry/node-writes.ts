import type { NodeMode } from './registry.types.js';
import { registryErrorCode } from '../errors/elastic-job.errors.js';
import type { ZookeeperTransport } from './zookeeper-transport.js';

/**
 * Curator's create-with-parents and friends over single requests: each one safe against a peer creating or
 * deleting the same nodes between our calls.
 */
export class NodeWrites {
  constructor(private readonly transport: ZookeeperTransport) {}

  /** Creates (with parents) or overwrites a persistent node; safe against a peer creating it concurrently. */
  async persist(path: string, data: Buffer): Promise<void> {
    try {
      await this.transport.setData(path, data);
    } catch (error) {
      if (registryErrorCode(error) !== 'NO_NODE') throw error;
      try {
        await this.createWithParents(path, data, 'PERSISTENT');
      } catch (createError) {
        if (registryErrorCode(createError) !== 'NODE_EXISTS') throw createError;
        await this.transport.setData(path, data); // a peer created it between our two calls
      }
    }
  }

  /** Creates the node, making persistent parents as needed. NODE_EXISTS is passed to the caller. */
  async createWithParents(path: string, data: Buffer, mode: NodeMode): Promise<string> {
    try {
      return await this.transport.create(path, data, mode);
    } catch (error) {
      if (registryErrorCode(error) !== 'NO_NODE') throw error;
      await this.transport.mkdirs(path.slice(0, path.lastIndexOf('/')) || '/');
      return this.transport.create(path, data, mode);
    }
  }

  /** Deletes the node; NO_NODE is not an error. */
  async remove(path: string): Promise<void> {
    try {
      await this.transport.delete(path);
    } catch (error) {
      if (registryErrorCode(error) !== 'NO_NODE') throw error;
    }
  }

  /** Deletes the node and its subtree, leaves first; missing nodes are not an error, nor children added meanwhile. */
  async removeRecursive(path: string): Promise<void> {
    const children = await this.transport.getChildren(path);
    if (children === undefined) return;
    await Promise.all(children.map((child) => this.removeRecursive(`${path === '/' ? '' : path}/${child}`)));
    try {
      await this.transport.delete(path);
    } catch (error) {
      const code = registryErrorCode(error);
      if (code === 'NOT_EMPTY') return this.removeRecursive(path);
      if (code !== 'NO_NODE') throw error;
    }
  }
}
