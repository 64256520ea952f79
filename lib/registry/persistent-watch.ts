import type { Client } from 'node-zookeeper-client';
import { internals, jute, type JuteRecord, type RawWatcherEvent } from './client-internals.js';

/**
 * ZooKeeper 3.6+ persistent recursive watches (`addWatch`, opcode 106) for node-zookeeper-client, which has no
 * API for them (docs/reference/zookeeper.md §2.4, §2.5). Without them every watch event costs a read to re-arm the
 * watch, and a steady-state firing would read from ZooKeeper (docs/SPEC.md §4.8 says it must not).
 *
 * Two small, contained reaches into the client's internals (version pinned in package.json; the project is
 * unmaintained, so they will not move under us):
 * - the request goes through the connection manager's queue like any other; once serialized its header says
 *   SET_WATCHES, the only body-less answer the client knows, so the server's `ErrorResponse(0)` is accepted
 *   instead of making the client drop the connection;
 * - notifications are seen before the client's one-shot watcher manager, which ignores paths it has no
 *   one-shot watcher for and would otherwise drop ours.
 *
 * A persistent watch belongs to one connection: the client's reconnect (SET_WATCHES) does not carry it, so the
 * owner re-adds it on every (re)connection, as Curator's PersistentWatcher does.
 */

const ADD_WATCH = 106;
export const PERSISTENT_RECURSIVE = 1;

/** `AddWatchRequest { ustring path; int mode }`. */
class AddWatchRequest implements JuteRecord {
  private pathBytes: Buffer;

  constructor(
    private readonly path: string,
    private readonly mode: number,
  ) {
    this.pathBytes = Buffer.from(path, 'utf8');
  }

  /** A chroot in the connection string: the client asks every request to prefix its path with it. */
  setChrootPath(chroot: string): void {
    if (chroot) this.pathBytes = Buffer.from(this.path === '/' ? chroot : chroot + this.path, 'utf8');
  }

  byteLength(): number {
    return 4 + this.pathBytes.length + 4;
  }

  serialize(buffer: Buffer, offset: number): number {
    let at = buffer.writeInt32BE(this.pathBytes.length, offset);
    at += this.pathBytes.copy(buffer, at);
    at = buffer.writeInt32BE(this.mode, at);
    return at - offset;
  }
}

/** Sends `addWatch(fullPath, mode)`; the callback gets the client's error (CONNECTION_LOSS, ...) or null. */
export function sendAddWatch(client: Client, fullPath: string, mode: number, callback: (error: unknown) => void): void {
  const header = new jute.protocol.RequestHeader();
  header.type = ADD_WATCH;
  const request = new jute.Request(header, new AddWatchRequest(fullPath, mode));
  const serialize = request.toBuffer.bind(request);
  request.toBuffer = () => {
    header.type = ADD_WATCH;
    const bytes = serialize();
    header.type = jute.OP_CODES.SET_WATCHES; // read back by the client when the (body-less) answer arrives
    return bytes;
  };
  internals(client).queue(request, callback);
}

/** Calls `listener(type, fullPath)` for every notification the client receives, then lets the client go on. */
export function tapNotifications(client: Client, listener: (type: number, fullPath: string) => void): void {
  const watchers = internals(client).watcherManager;
  if (watchers.__elasticJobTap) return;
  watchers.__elasticJobTap = true;
  const emit = watchers.emit.bind(watchers);
  watchers.emit = (event: RawWatcherEvent): void => {
    listener(event.type, event.path);
    // The client throws inside its socket handler on types it does not know (5 to 7 are the watch-removed
    // events, §2.5): never hand it one.
    if (event.type >= 1 && event.type <= 4) emit(event);
  };
}
