import type { Socket } from 'node:net';
import type { WatchEventType } from './registry.types.js';

/**
 * The shapes of node-zookeeper-client's internals this library reaches into (zookeeper-client.adapter.ts, the only
 * file that imports the client, checks them on every new client: assertClientShape). Types only.
 */

export interface JuteRecord {
  byteLength(): number;
  serialize(buffer: Buffer, offset: number): number;
  setChrootPath?(path: string): void;
}
/** A record the client reads an answer into. */
export interface JuteResponseRecord {
  deserialize(buffer: Buffer, offset: number): number;
  setChrootPath(path: string | undefined): void;
}
export interface JuteRequestHeader extends JuteRecord {
  xid: number;
  type: number;
}
export interface JuteCreateRequest extends JuteRecord {
  path: string;
  data: Buffer;
  acl: unknown[];
  flags: number;
}
export interface Jute {
  OP_CODES: {
    SET_WATCHES: number;
    MULTI: number;
    ERROR: number;
    PING: number;
    CREATE: number;
    DELETE: number;
    CHECK: number;
    SET_DATA: number;
  };
  XID_PING: number;
  protocol: {
    RequestHeader: new (xid?: number, type?: number) => JuteRequestHeader;
    CreateRequest: new () => JuteCreateRequest;
    SetDataResponse: new () => JuteResponseRecord & { stat: unknown };
  };
  /** The reader of a `multi` answer (multi-answer.ts replaces its deserialize). */
  TransactionResponse: {
    new (): JuteResponseRecord & { results: unknown[] };
    prototype: { deserialize(this: never, buffer: Buffer, offset: number): number };
  };
  Request: new (header: JuteRequestHeader, payload: JuteRecord | null) => { toBuffer(): Buffer };
}
export interface RawWatcherEvent {
  type: number;
  path: string;
}
export type OneShotWatcher = (event: unknown) => void;
/** The client's one-shot watchers: an event emitter a path, in one object per kind, taken off when they fire. */
export interface WatcherManagerInternals {
  emit(event: RawWatcherEvent): void;
  registerDataWatcher(path: string, watcher: OneShotWatcher): void;
  registerChildWatcher(path: string, watcher: OneShotWatcher): void;
  registerExistenceWatcher(path: string, watcher: OneShotWatcher): void;
  dataWatchers: Record<string, unknown>;
  childWatchers: Record<string, unknown>;
  existenceWatchers: Record<string, unknown>;
}
export interface ConnectionManagerInternals {
  queue(request: unknown, callback: (error: unknown, response?: unknown) => void): void;
  watcherManager: WatcherManagerInternals;
  /** The connection string's chroot (`/a` of `host:port/a`), taken off notification paths; empty without one. */
  chrootPath?: string;
  /** The open socket, while there is one (replaced on every reconnection). */
  socket?: Socket;
  onSocketData(data: Buffer): void;
  onSocketConnected(...args: unknown[]): void;
  /** Requests awaiting their answer, in order: only push() and shift() are used on it. */
  pendingQueue: { push(item: unknown): number; shift(): unknown };
}

/** A watch notification, full path. */
export interface RawNotification {
  type: WatchEventType;
  path: string;
}
