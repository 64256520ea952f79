import type { ReplyClock } from './reply-clock.js';
import type { ZxidWatermark } from './zxid-watermark.js';
import { AnswerQueue, corkEachTick, FrameReader, readNotification } from './client-io.js';
import type {
  ConnectionManagerInternals,
  OneShotWatcher,
  RawNotification,
  RawWatcherEvent,
} from './client-internals.js';
import type { WatchEventType } from './registry.types.js';

/**
 * The changes the adapter (zookeeper-client.adapter.ts) installs into a new client's connection manager before it
 * connects: notifications tapped ahead of the one-shot watcher manager, and the socket's I/O streamlined.
 */

/**
 * Every notification is seen before the client's one-shot watcher manager, which ignores paths it has no
 * one-shot watcher for and would otherwise drop those of persistent watches. It is handed only the paths that
 * have one: it looks a path up in plain objects, which makes V8 intern every path string first, 0.8 s of CPU over
 * the 270,000 notifications of a 10,000-job start-up where hardly any path has a one-shot watcher.
 */
export function tapNotifications(
  manager: ConnectionManagerInternals,
  eventTypes: Readonly<Record<number, WatchEventType>>,
  listener: (notification: RawNotification) => void,
): void {
  const watchers = manager.watcherManager;
  const emit = watchers.emit.bind(watchers);
  /** Paths a one-shot watcher was registered on and may still be (a superset: dropped once none is left). */
  const oneShotPaths = new Set<string>();
  for (const kind of ['registerDataWatcher', 'registerChildWatcher', 'registerExistenceWatcher'] as const) {
    const register = watchers[kind].bind(watchers);
    watchers[kind] = (path: string, watcher: OneShotWatcher): void => {
      oneShotPaths.add(path);
      register(path, watcher);
    };
  }
  watchers.emit = (event: RawWatcherEvent): void => {
    const type = eventTypes[event.type];
    if (type) listener({ type, path: event.path });
    // The client throws inside its socket handler on types it does not know (5 to 7 are the watch-removed
    // events, docs/reference/zookeeper.md §2.5): never hand it one.
    if (event.type < 1 || event.type > 4 || !oneShotPaths.has(event.path)) return;
    emit(event);
    const { path } = event;
    if (!watchers.dataWatchers[path] && !watchers.childWatchers[path] && !watchers.existenceWatchers[path])
      oneShotPaths.delete(path);
  };
}

/**
 * Two fixes to the client's socket handling, which a 1000-job start-up profile showed costing about a fifth of
 * the process's CPU (see client-io.ts): chunks are cut into whole frames before the client reads them, and the
 * writes of one tick are corked. Both hook methods the client binds when it opens a socket, so they are
 * installed before connect().
 */
export function streamlineIo(
  manager: ConnectionManagerInternals,
  watermark?: ZxidWatermark,
  replies?: ReplyClock,
): void {
  const handleFrame = manager.onSocketData;
  const onConnected = manager.onSocketConnected;
  let framer: FrameReader | undefined;
  manager.onSocketConnected = function (...args: unknown[]) {
    if (manager.socket) corkEachTick(manager.socket);
    return onConnected.apply(manager, args);
  };
  manager.pendingQueue = new AnswerQueue();
  manager.onSocketData = function (data: Buffer) {
    const socket = manager.socket;
    if (!framer || framer.socket !== socket) framer = new FrameReader(socket);
    for (const frame of framer.push(data)) {
      if (!framer.first) {
        watermark?.see(frame);
        replies?.see(frame);
      }
      // A node event: read here and handed to the watcher manager as the client would (see readNotification).
      const notification = framer.first ? undefined : readNotification(frame, manager.chrootPath);
      if (notification) {
        manager.watcherManager.emit(notification);
        if (manager.socket !== socket) return; // a watcher closed or replaced the connection
        continue;
      }
      // An answer to a request (xid >= 0; not the connect response, a socket's first frame) that carries an
      // error code makes two errors, the client's and ours wrapping it; their stacks are the socket handler's,
      // never a caller's, and capturing them cost 2.5 of 35 s of CPU in one 10,000-job start-up profile
      // (NODE_EXISTS, NO_NODE answers). Notifications and session events keep their stacks: they reach the
      // app's code synchronously.
      const answer = !framer.first && frame.length >= 8 && frame.readInt32BE(4) >= 0;
      framer.first = false;
      const stackTraceLimit = Error.stackTraceLimit;
      if (answer) Error.stackTraceLimit = 0;
      try {
        handleFrame.call(manager, frame);
      } finally {
        Error.stackTraceLimit = stackTraceLimit;
      }
      if (manager.socket !== socket) return; // the client dropped this connection on what it read
    }
  };
}
