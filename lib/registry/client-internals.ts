import { createRequire } from 'node:module';
import type { Client } from 'node-zookeeper-client';

/**
 * The slice of node-zookeeper-client's internals this library reaches into (persistent watches, lean multi
 * requests): its connection manager's request queue and watcher manager, and its jute request classes. The
 * client is unmaintained and its version pinned in package.json (reference/zookeeper.md §3), so these do not
 * move under us; an unexpected shape is reported instead of failing later.
 */

export interface JuteRecord {
  byteLength(): number;
  serialize(buffer: Buffer, offset: number): number;
  setChrootPath?(path: string): void;
}
export interface JuteRequestHeader extends JuteRecord {
  xid: number;
  type: number;
}
export interface Jute {
  OP_CODES: { SET_WATCHES: number; MULTI: number; ERROR: number; PING: number };
  XID_PING: number;
  protocol: { RequestHeader: new (xid?: number, type?: number) => JuteRequestHeader };
  Request: new (header: JuteRequestHeader, payload: JuteRecord | null) => { toBuffer(): Buffer };
}
export interface RawWatcherEvent {
  type: number;
  path: string;
}
export interface ConnectionManagerInternals {
  queue(request: unknown, callback: (error: unknown, response?: unknown) => void): void;
  watcherManager: { emit(event: RawWatcherEvent): void; __elasticJobTap?: boolean };
}

const require = createRequire(import.meta.url);
export const jute = require('node-zookeeper-client/lib/jute/index.js') as Jute;
/** The client's own error factory, so errors from our requests look like errors from its own. */
export const createClientException = (require('node-zookeeper-client/lib/Exception.js') as { create(code: number): Error }).create;

/**
 * Queues a ping, as the client's own idle timer does (`ConnectionManager.onSocketTimeout`): header only, no
 * answer callback (the client skips ping answers).
 */
export function sendPing(client: Client): void {
  internals(client).queue(new jute.Request(new jute.protocol.RequestHeader(jute.XID_PING, jute.OP_CODES.PING), null), () => undefined);
}

export function internals(client: Client): ConnectionManagerInternals {
  const manager = (client as unknown as { connectionManager?: ConnectionManagerInternals }).connectionManager;
  if (!manager || typeof manager.queue !== 'function' || typeof manager.watcherManager?.emit !== 'function') {
    throw new Error('this node-zookeeper-client has an unexpected shape (its version is pinned in package.json)');
  }
  return manager;
}
