import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import type { Client } from 'node-zookeeper-client';

/**
 * The slice of node-zookeeper-client's internals this library reaches into (persistent watches, lean multi
 * requests): its connection manager's request queue and watcher manager, and its jute request classes. The
 * client is unmaintained and its version pinned in package.json (docs/reference/zookeeper.md §3), so these do not
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
  /** The open socket, while there is one (replaced on every reconnection). */
  socket?: Socket;
  onSocketData(data: Buffer): void;
  onSocketConnected(...args: unknown[]): void;
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
  return (client as unknown as { connectionManager: ConnectionManagerInternals }).connectionManager;
}

/**
 * Every shape this library relies on, checked on a new client before it connects: what is missing is named,
 * instead of a reach that silently stops working (the liveness watchdog, pings, persistent watches and multi
 * requests all depend on them). Throws an Error naming what is missing.
 */
export function assertClientShape(client: Client): void {
  const manager = (client as unknown as { connectionManager?: Partial<ConnectionManagerInternals> }).connectionManager;
  const missing = [
    ['connectionManager', manager !== undefined],
    ['connectionManager.queue()', typeof manager?.queue === 'function'],
    ['connectionManager.watcherManager.emit()', typeof manager?.watcherManager?.emit === 'function'],
    ['connectionManager.onSocketData()', typeof manager?.onSocketData === 'function'],
    ['connectionManager.onSocketConnected()', typeof manager?.onSocketConnected === 'function'],
    ['jute.OP_CODES (SET_WATCHES, MULTI, ERROR, PING)', [jute.OP_CODES?.SET_WATCHES, jute.OP_CODES?.MULTI, jute.OP_CODES?.ERROR, jute.OP_CODES?.PING].every((code) => typeof code === 'number')],
    ['jute.XID_PING', typeof jute.XID_PING === 'number'],
    ['jute.protocol.RequestHeader', typeof jute.protocol?.RequestHeader === 'function'],
    ['jute.Request', typeof jute.Request === 'function'],
    ['Exception.create()', typeof createClientException === 'function'],
  ].flatMap(([name, present]) => (present ? [] : [name as string]));
  if (missing.length > 0) {
    throw new Error(`node-zookeeper-client lacks what this library relies on: ${missing.join(', ')}. Install the version pinned in nestjs-elastic-job's package.json`);
  }
}

/** The socket of a connected client, checked: the watchdog reads and destroys it, so it must be a real one. */
export function connectedSocket(client: Client): Socket {
  const socket = internals(client).socket;
  if (!socket || typeof socket.destroy !== 'function' || typeof socket.on !== 'function' || typeof socket.bytesWritten !== 'number') {
    throw new Error('node-zookeeper-client reported a connection without a socket this library can watch: install the version pinned in its package.json');
  }
  return socket;
}
