import { connect } from 'node:net';
import { parseServerLists } from './zookeeper-names.js';

/**
 * Why the servers of a connect string do not answer, each probed with a plain TCP connect: node-zookeeper-client
 * retries a failed connection silently, so without this a start-up that cannot connect says only that it did not.
 * One line per server: refused, unknown host, no answer, or reachable but no ZooKeeper session.
 */
export async function diagnoseServers(serverLists: string, timeoutMs = 2000): Promise<string[]> {
  const parsed = parseServerLists(serverLists);
  if (typeof parsed === 'string') return [`the connect string is malformed: ${parsed}`];
  return Promise.all(
    parsed.servers.map(
      ({ host, port }) =>
        new Promise<string>((resolve) => {
          const socket = connect({ host, port });
          const done = (reason: string): void => {
            socket.destroy();
            resolve(`${host}:${port} ${reason}`);
          };
          socket.setTimeout(timeoutMs, () => done(`gives no answer within ${timeoutMs} ms (address, firewall?)`));
          socket.once('connect', () =>
            done('accepts connections but gave no ZooKeeper session (not ZooKeeper there, or it is not serving?)'),
          );
          socket.once('error', (error: NodeJS.ErrnoException) => {
            if (error.code === 'ECONNREFUSED') done('refused the connection (is ZooKeeper running there?)');
            else if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') done('is an unknown host');
            else done(`cannot be reached: ${error.code ?? error.message}`);
          });
        }),
    ),
  );
}
