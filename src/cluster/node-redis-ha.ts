/**
 * RedisLinks for the highly available topologies, on `@redis/client` (node-redis) like the
 * single-server link (node-redis.ts), with the same contract: RESP2 values, no offline queue, a
 * command rejects at once while its server is unreachable and never waits longer than
 * `commandTimeoutMs`, error replies reject with RedisReplyError.
 *
 * - **Sentinel**: node-redis asks the sentinels for the master, connects to it, and follows a
 *   failover (the sentinels' `+switch-master`, or a READONLY / dropped connection). One reserved
 *   master connection carries every command (pipelined as with one server), one more carries the
 *   change bus subscription (node-redis moves it to the new master). `onFailover` is called when
 *   the master changed after the first connection: the data written just before the old master
 *   died may not have reached the promoted replica (replication is asynchronous), so the cluster
 *   writes its directory entries again then.
 * - **Cluster**: node-redis discovers the slots from any seed node and sends each command to the
 *   master owning its first key's slot (a MOVED redirect makes it re-read the slot map), and
 *   `onFailover` is called when a promoted replica starts serving slots. Every
 *   command Sluice sends names its key first, and every multi-key command and script touches keys
 *   of one hash tag (`sl:{S}…`), so each goes to exactly one node (keys.ts). Sharded pub/sub
 *   (SSUBSCRIBE) keeps the change bus on the shard owning its channel.
 */

import { CommandDeadlines, DEFAULT_COMMAND_DEADLINE_MS } from './command-deadlines.js';
import {
  clientDefaults,
  connectNodeRedis,
  loadNodeRedis,
  RedisUnavailableError,
  sendVia,
} from './node-redis.js';
import type { RedisLink } from './redis-link.js';
import type { RedisNodeAddress, RedisTopology } from './topology.js';

export interface HaLinkOptions {
  /** Deadline per command, the wait for a failover included. @defaultValue 1000 */
  commandTimeoutMs?: number;
  /** Deadline to (re)connect to one server. @defaultValue 1000 */
  connectTimeoutMs?: number;
  /** Called on connection errors (the client reconnects on its own). */
  onError?: (error: Error) => void;
}

export interface SentinelLinkOptions extends HaLinkOptions {
  name: string;
  sentinels: RedisNodeAddress[];
  /** The master changed (a failover) after the first connection. */
  onFailover?: () => void;
}

export interface ClusterLinkOptions extends HaLinkOptions {
  nodes: RedisNodeAddress[];
  /** A master Sluice had not used before took slots over (a replica promoted) after the first connection. */
  onFailover?: () => void;
}

type Listener = (message: string) => void;

/** How long close() lets commands in flight finish before the connections are destroyed. */
const CLOSE_MS = 2_000;

/** What the Sentinel and Cluster clients of node-redis share, as this file uses them. */
interface HaClient {
  connect(): Promise<unknown>;
  on(event: string, listener: (e: never) => void): unknown;
  subscribe(channel: string, listener: Listener): Promise<unknown>;
  sSubscribe(channel: string, listener: Listener): Promise<unknown>;
  close(): Promise<unknown>;
  destroy(): Promise<unknown> | undefined;
  readonly isReady: boolean;
}

interface SentinelClient extends HaClient {
  sendCommand(
    isReadonly: boolean | undefined,
    args: readonly string[],
    o?: { timeout?: number },
  ): Promise<unknown>;
}

/** A Cluster client routes each command by a key (the first argument). */
interface ClusterClient extends HaClient {
  sendCommand(
    firstKey: string | undefined,
    isReadonly: boolean | undefined,
    args: readonly string[],
    o?: { timeout?: number },
  ): Promise<unknown>;
}

/**
 * The key a command is routed by on a Redis Cluster: the first key of a script (EVAL/EVALSHA
 * numkeys key…), the channel of a (S)PUBLISH, no key for COMMAND, else the first argument.
 */
export function routingKey(args: readonly string[]): string | undefined {
  const name = (args[0] ?? '').toUpperCase();
  if (name === 'EVAL' || name === 'EVALSHA') return Number(args[2]) > 0 ? args[3] : undefined;
  if (name === 'COMMAND' || name === 'PING' || name === 'INFO') return undefined;
  return args[1];
}

/** Rejects with RedisUnavailableError after `ms` (the command itself may still settle later: ignored). */
function bounded<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RedisUnavailableError(`Redis did not answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Tears a client down whatever state it is in (a failed connect() may have destroyed it already). */
async function destroyQuietly(client: { destroy(): Promise<unknown> | undefined }): Promise<void> {
  try {
    await client.destroy();
  } catch {
    // Already torn down.
  }
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/** A link to the master a set of sentinels names. Rejects when none of them answers in time. */
export async function connectNodeRedisSentinel(o: SentinelLinkOptions): Promise<RedisLink> {
  const mod = await loadNodeRedis<{ createSentinel: (options: Record<string, unknown>) => SentinelClient }>();
  const timeout = o.commandTimeoutMs ?? DEFAULT_COMMAND_DEADLINE_MS;
  const deadlines = new CommandDeadlines(timeout);
  // A (re)subscription may wait for a failover's reconnection: a longer allowance of its own.
  const subscribing = new CommandDeadlines(Math.max(timeout, 5_000));
  const node = clientDefaults(o.connectTimeoutMs);
  const sentinel = mod.createSentinel({
    name: o.name,
    sentinelRootNodes: o.sentinels,
    RESP: 2,
    nodeClientOptions: node,
    sentinelClientOptions: { socket: node['socket'] },
    // One master connection for every command (pipelined), none to replicas: reads must see the
    // writes (a replica lags), and Sluice's load is writes.
    masterPoolSize: 1,
    replicaPoolSize: 0,
    reserveClient: true,
    // Failovers are learnt from the sentinels' pub/sub at once; this scan is the fallback.
    scanInterval: 5_000,
  });
  let connected = false;
  let masterChanged = false;
  sentinel.on('error', (e: unknown) => o.onError?.(asError(e)));
  sentinel.on('client-error', (e: { error?: unknown }) => o.onError?.(asError(e.error)));
  // A new master is announced before node-redis has connected to it; `ready` follows once it has,
  // and only then can what the cluster writes again reach it.
  sentinel.on('topology-change', (e: { type?: string }) => {
    if (e.type === 'MASTER_CHANGE' && connected) masterChanged = true;
  });
  sentinel.on('ready', () => {
    if (!masterChanged) return;
    masterChanged = false;
    o.onFailover?.();
  });
  try {
    await bounded(sentinel.connect(), Math.max(2_000, (o.connectTimeoutMs ?? 1000) * 5));
  } catch (error) {
    await destroyQuietly(sentinel);
    throw new RedisUnavailableError(
      `no sentinel of ${o.sentinels.map((n) => `${n.host}:${n.port}`).join(',')} named a reachable master '${o.name}'`,
      { cause: error },
    );
  }
  connected = true;
  return {
    async send(args) {
      if (!sentinel.isReady) throw new RedisUnavailableError('Redis (Sentinel) is not connected');
      return sendVia(() => sentinel.sendCommand(false, args, { timeout }), deadlines);
    },
    async subscribe(channel, sharded, onMessage) {
      await sendVia(
        () => (sharded ? sentinel.sSubscribe(channel, onMessage) : sentinel.subscribe(channel, onMessage)),
        subscribing,
      );
    },
    async close() {
      // A graceful close waits for pending commands, which may sit in a failover's reconnection loop.
      await bounded(sentinel.close(), CLOSE_MS).catch(() => destroyQuietly(sentinel));
    },
  };
}

/** A link to a Redis Cluster discovered from seed nodes. Rejects when none of them answers in time. */
export async function connectNodeRedisCluster(o: ClusterLinkOptions): Promise<RedisLink> {
  const mod = await loadNodeRedis<{ createCluster: (options: Record<string, unknown>) => ClusterClient }>();
  const timeout = o.commandTimeoutMs ?? DEFAULT_COMMAND_DEADLINE_MS;
  const deadlines = new CommandDeadlines(timeout);
  // A (re)subscription may wait for a failover's reconnection: a longer allowance of its own.
  const subscribing = new CommandDeadlines(Math.max(timeout, 5_000));
  const cluster = mod.createCluster({
    rootNodes: o.nodes.map((n) => ({ socket: { host: n.host, port: n.port } })),
    defaults: clientDefaults(o.connectTimeoutMs),
    RESP: 2,
    // Masters only: a replica lags, and a directory read must see the owner's write.
    useReplicas: false,
  });
  cluster.on('error', (e: unknown) => o.onError?.(asError(e)));
  cluster.on('node-error', (e: unknown) => o.onError?.(asError(e)));
  // node-redis opens a connection to masters only (useReplicas: false): a connection to an address
  // it never used before, once connected, is a replica that was promoted (a failover), whose data
  // may miss the last writes of the master it replaces. A master reconnecting is not one.
  const masters = new Set<string>();
  let connected = false;
  cluster.on('node-ready', (node: { host?: string; port?: number }) => {
    const address = `${node.host}:${node.port}`;
    if (masters.has(address)) return;
    masters.add(address);
    if (connected) o.onFailover?.();
  });
  try {
    await bounded(cluster.connect(), Math.max(2_000, (o.connectTimeoutMs ?? 1000) * 5));
  } catch (error) {
    await destroyQuietly(cluster);
    throw new RedisUnavailableError(
      `no Redis Cluster node of ${o.nodes.map((n) => `${n.host}:${n.port}`).join(',')} answered`,
      { cause: error },
    );
  }
  connected = true;
  return {
    async send(args) {
      if (!cluster.isReady) throw new RedisUnavailableError('Redis Cluster is not connected');
      return sendVia(() => cluster.sendCommand(routingKey(args), false, args, { timeout }), deadlines);
    },
    async subscribe(channel, sharded, onMessage) {
      await sendVia(
        () => (sharded ? cluster.sSubscribe(channel, onMessage) : cluster.subscribe(channel, onMessage)),
        subscribing,
      );
    },
    async close() {
      await bounded(cluster.close(), CLOSE_MS).catch(() => destroyQuietly(cluster));
    },
  };
}

/**
 * The link for a topology, with the error callback. A Sentinel or Cluster link tells of failovers
 * (`RedisLink.onFailover`: the cluster re-registers, a task store sends its writes again); a single
 * server's link cannot fail over (a restart keeps its address) and has no such method.
 */
export async function connectTopology(
  t: RedisTopology,
  hooks: { onError: (error: Error) => void },
): Promise<RedisLink> {
  if (t.kind === 'single') return connectNodeRedis({ url: t.url, onError: hooks.onError });
  const listeners = new Set<() => void>();
  const onFailover = (): void => {
    for (const l of listeners) l();
  };
  const link =
    t.kind === 'sentinel'
      ? await connectNodeRedisSentinel({
          name: t.name,
          sentinels: t.sentinels,
          onError: hooks.onError,
          onFailover,
        })
      : await connectNodeRedisCluster({ nodes: t.nodes, onError: hooks.onError, onFailover });
  return {
    send: (args) => link.send(args),
    ...(link.subscribe === undefined ? {} : { subscribe: link.subscribe.bind(link) }),
    close: () => link.close(),
    onFailover: (listener) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}
