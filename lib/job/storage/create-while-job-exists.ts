import { JobNotFoundError, registryErrorCode } from '../../errors/elastic-job.errors.js';
import type { RegistryCenter } from '../../registry/registry-center.js';
import type { TransactionOp } from '../../registry/registry.types.js';
import type { JobNodePath } from '../paths.js';

const EMPTY = Buffer.alloc(0);
/** A race lost this many times in a row (peers creating the same parents) is ZooKeeper's error to the caller. */
const ATTEMPTS = 3;

/**
 * Creates nodes in a job's tree only while its config node is there: the creates go in one transaction with a
 * check of that node, so that a call racing a `removeJob` never puts back part of the removed job's tree (a create
 * with parents would). Nodes already there are left as they are (nothing is rewritten); parents come before their
 * children in `nodes`. A JobNotFoundError when the job is gone.
 */
export async function createWhileJobExists(
  registry: RegistryCenter,
  paths: JobNodePath,
  nodes: ReadonlyArray<{ path: string; data?: Buffer }>,
): Promise<void> {
  const exists = async (path: string): Promise<boolean> => (await registry.exists(path)) !== undefined;
  for (let attempt = 1; ; attempt++) {
    const present = await Promise.all(nodes.map((node) => exists(node.path)));
    const missing = nodes.filter((_, i) => !present[i]);
    if (missing.length === 0) return;
    const ops: TransactionOp[] = [
      { op: 'check', path: paths.config },
      ...missing.map((node): TransactionOp => ({
        op: 'create',
        path: node.path,
        data: node.data ?? EMPTY,
        mode: 'PERSISTENT',
      })),
    ];
    try {
      await registry.transaction(ops);
      return;
    } catch (error) {
      const code = registryErrorCode(error);
      if (code !== 'NO_NODE' && code !== 'NODE_EXISTS') throw error;
      if (!(await exists(paths.config))) throw new JobNotFoundError(paths.jobName);
      if (attempt >= ATTEMPTS) throw error;
    }
  }
}
