import { parse, stringify } from 'yaml';
import { registryErrorCode } from '../../errors/elastic-job.errors.js';
import type { JobInstance } from '../../interfaces/sharded-job-options.interface.js';
import type { TransactionOp } from '../../registry/registry.types.js';
import { serverIpOfInstance } from '../paths.js';
import type { JobContext } from '../context/job-context.js';
import type { ServerService } from '../server/server.service.js';

let lastInstanceValue: { instanceId: string; ip: string; value: string } | undefined;

/** `instances/{ip}@-@{pid}`, ephemeral (ElasticJob's InstanceService). */
export class InstanceService {
  /** Each live instance's server as its node says it, with the value it was read from (serverIpOf). */
  private readonly serverIps = new Map<string, { value: string; serverIp: string }>();
  /**
   * The session our instance node was last created on (16 hex digits): only that session can see it deleted by hand.
   */
  private createdOnSession: string | undefined;
  /**
   * The whole `instances` directory was seen deleted since our node was last created: a deletion of our node
   * then is that accident's (a peer may have put the directory back already), not an operator's shutdown.
   */
  private directoryDeletedSinceCreated = false;

  constructor(
    private readonly ctx: JobContext,
    private readonly servers: ServerService,
  ) {}

  /** ElasticJob's instance YAML: `jobInstanceId: ...` and `serverIp: ...`. */
  localInstanceValue(): string {
    // The same for every job of the process: written once.
    const { instanceId, ip } = this.ctx;
    if (lastInstanceValue?.instanceId !== instanceId || lastInstanceValue.ip !== ip)
      lastInstanceValue = { instanceId, ip, value: stringify({ jobInstanceId: instanceId, serverIp: ip }) };
    return lastInstanceValue.value;
  }

  async persistOnline(): Promise<void> {
    const session = this.ctx.connection.getSessionId();
    await this.ctx.storage.createEphemeral(this.ctx.paths.instance(this.ctx.instanceId), this.localInstanceValue(), {
      replaceOthers: true,
    });
    this.recordCreated(session);
  }

  /** The create of our node, for a transaction of the caller's; recordCreated() once it has landed. */
  createOp(): TransactionOp {
    return this.ctx.storage.createOp(
      this.ctx.paths.instance(this.ctx.instanceId),
      this.localInstanceValue(),
      'EPHEMERAL',
    );
  }

  /** Our node was created by a request sent on `session`. */
  recordCreated(session: string | undefined): void {
    // An answer on another session than the request's is not one (the registry fails requests on session loss).
    if (session === this.ctx.connection.getSessionId()) this.createdOnSession = session;
    this.directoryDeletedSinceCreated = false;
  }

  /** The cache saw the `instances` directory itself deleted. */
  onDirectoryDeleted(): void {
    this.directoryDeletedSinceCreated = true;
  }

  /** Whether our node went with the whole directory (see directoryDeletedSinceCreated). */
  wentWithDirectory(): boolean {
    return this.directoryDeletedSinceCreated;
  }

  /**
   * After the whole `instances` node was deleted: puts it and our node back in one request, only while `config`
   * exists. False when it does not (the job is being removed); NODE_EXISTS on the directory (a peer put it back
   * first) is retried with our node alone.
   */
  async restoreAfterAccident(config: string): Promise<boolean> {
    const { storage, paths, instanceId } = this.ctx;
    const ours: TransactionOp = {
      op: 'create',
      path: paths.instance(instanceId),
      data: Buffer.from(this.localInstanceValue(), 'utf8'),
      mode: 'EPHEMERAL',
    };
    const directory: TransactionOp = { op: 'create', path: paths.instances, data: Buffer.alloc(0), mode: 'PERSISTENT' };
    for (const ops of [[directory, ours], [ours]]) {
      try {
        await storage.transaction([{ op: 'check', path: config }, ...ops]);
        this.createdOnSession = this.ctx.connection.getSessionId();
        this.directoryDeletedSinceCreated = false;
        return true;
      } catch (error) {
        const code = registryErrorCode(error);
        if (code === 'NO_NODE' && (await storage.direct.exists(config)) === undefined) return false;
        if (code !== 'NODE_EXISTS') throw error;
      }
    }
    return true; // our node is there already (a create whose answer was lost)
  }

  /**
   * Whether our instance node was deleted by someone while our session lives, asked of ZooKeeper (the cache shows
   * the old session's node gone after a new session too): 'deleted', 'present', or 'session-changed' when the node
   * belonged to an earlier session, whose expiry removed it (re-registration puts it back).
   */
  async checkOwnNodeDeleted(): Promise<'deleted' | 'present' | 'session-changed'> {
    const session = this.ctx.connection.getSessionId();
    if (session === undefined || session !== this.createdOnSession || !this.ctx.connection.isConnected())
      return 'session-changed';
    const stat = await this.ctx.storage.direct.exists(this.ctx.paths.instance(this.ctx.instanceId));
    if (stat !== undefined) return 'present';
    return this.ctx.connection.getSessionId() === session ? 'deleted' : 'session-changed';
  }

  async removeInstance(): Promise<void> {
    await this.ctx.storage.remove(this.ctx.paths.instance(this.ctx.instanceId));
  }

  isLocalInstanceOnline(): boolean {
    return this.ctx.storage.cached.has(this.ctx.paths.instance(this.ctx.instanceId));
  }

  isInstanceOnline(instanceId: string): boolean {
    return this.ctx.storage.cached.has(this.ctx.paths.instance(instanceId));
  }

  /**
   * Reads the nodes of live instances the cache lists unread (their data is read only when needed, see
   * JobNodePath.cacheShape): before getAvailableJobInstances() where its answer is acted on.
   */
  readInstances(): Promise<void> {
    const { storage, paths } = this.ctx;
    return storage.cached.readUnread(storage.cached.children(paths.instances).map((id) => paths.instance(id)));
  }

  /** Whether the cache lists a live instance whose node it has not read (readInstances() did not get it). */
  hasUnreadInstances(): boolean {
    const { storage, paths } = this.ctx;
    return storage.cached.children(paths.instances).some((id) => storage.cached.isUnread(paths.instance(id)));
  }

  /**
   * Whether some live instance's server is ENABLED, without reading instance nodes: an unread node's server is the
   * one its id names (`{ip}@-@{pid}`). For a guard only; what is sharded is read (getAvailableJobInstances).
   */
  hasAvailableJobInstances(): boolean {
    return this.availableInstanceIds().length > 0;
  }

  /** The ids of live instances whose server is ENABLED, their nodes read or not (see hasAvailableJobInstances). */
  availableInstanceIds(): string[] {
    const { storage, paths } = this.ctx;
    return storage.cached.children(paths.instances).filter((id) => {
      // Undefined while the node is unread.
      const value = storage.cached.get(paths.instance(id));
      const serverIp = value === undefined ? serverIpOfInstance(id) : this.serverIpOf(id, value);
      return this.servers.isEnableServer(serverIp);
    });
  }

  /**
   * Live instances whose server is ENABLED, in ElasticJob's order (descending instance id): the sharding input.
   * Instances whose node is unread are left out: readInstances() first.
   */
  getAvailableJobInstances(): JobInstance[] {
    const result: JobInstance[] = [];
    const seen = new Set<string>();
    for (const id of this.ctx.storage.cached.children(this.ctx.paths.instances)) {
      const value = this.ctx.storage.cached.get(this.ctx.paths.instance(id));
      if (value === undefined) continue; // unread
      seen.add(id);
      const serverIp = this.serverIpOf(id, value);
      if (this.servers.isEnableServer(serverIp)) result.push({ jobInstanceId: id, serverIp });
    }
    for (const id of this.serverIps.keys()) if (!seen.has(id)) this.serverIps.delete(id);
    return result;
  }

  /**
   * An instance's server, from its node's YAML (`serverIp`), parsed once per value: a node's value never changes
   * while it lives, and parsing it at every sharding cost 1.3 of 42 s in one 10,000-job start-up profile.
   */
  private serverIpOf(id: string, value: string): string {
    const known = this.serverIps.get(id);
    if (known?.value === value) return known.serverIp;
    const serverIp = serverIpOfInstanceValue(id, value);
    this.serverIps.set(id, { value, serverIp });
    return serverIp;
  }
}

/**
 * The two-line form ElasticJob and this library write (`jobInstanceId: {id}` then `serverIp: {ip}`), with an IPv4
 * or IPv6 address that YAML reads as the same text (an IPv6 one starting with a digit group, not ending in `:`): read
 * without a YAML parser (every job of a 10,000-job process parsed the same node, 0.4 ms each). Anything else is
 * parsed.
 */
const PLAIN_INSTANCE_VALUE =
  /^jobInstanceId: [^\s'"#]+\nserverIp: (\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{0,4}){2,7}(?<!:))\n$/;

/** The server of an instance node in the plain two-line form; undefined for any other form. */
export function plainInstanceServerIp(value: string): string | undefined {
  return PLAIN_INSTANCE_VALUE.exec(value)?.[1];
}

/** An instance's server from its node's YAML; the id's when the node does not say (an older or foreign value). */
export function serverIpOfInstanceValue(id: string, value: string): string {
  const plain = plainInstanceServerIp(value);
  if (plain !== undefined) return plain;
  try {
    const parsed = parse(value) as { serverIp?: unknown } | null;
    if (parsed && typeof parsed.serverIp === 'string' && parsed.serverIp !== '') return parsed.serverIp;
  } catch {
    // unreadable: the id says which server it is
  }
  return serverIpOfInstance(id);
}
