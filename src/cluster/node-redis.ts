/**
 * The reference RedisLink: one `@redis/client` (node-redis) connection. node-redis pipelines the
 * commands issued in one tick on its own, so the cluster needs one connection per instance whatever
 * the number of sessions and streams.
 *
 * `@redis/client` is an optional dependency, loaded only when a cluster is configured: a
 * single-instance server never imports it. Offline queueing is off (`disableOfflineQueue`): while
 * Redis is unreachable a command rejects at once, and Sluice decides what that means (503 for
 * `initialize`, carry on for established streams) instead of piling commands up in memory.
 */

import { boundedWait } from '../flow/bounded-wait.js';
import { CommandDeadlines, DEFAULT_COMMAND_DEADLINE_MS } from './command-deadlines.js';
import {
  isReplyError,
  type RedisLink,
  type RedisReply,
  RedisReplyError,
  RedisUnavailableError,
} from './redis-link.js';

export interface NodeRedisOptions {
  /** `redis://[user:pass@]host:port[/db]` or `rediss://…` */
  url: string;
  /** Deadline per command, from sending it to its reply (command-deadlines.ts). @defaultValue 1000 */
  commandTimeoutMs?: number;
  /** Deadline to (re)connect. @defaultValue 1000 */
  connectTimeoutMs?: number;
  /** Called on connection errors (the client reconnects on its own). */
  onError?: (error: Error) => void;
}

export { RedisUnavailableError } from './redis-link.js';

interface MinimalClient {
  connect(): Promise<unknown>;
  sendCommand(args: readonly string[], options?: { timeout?: number }): Promise<unknown>;
  on(event: 'error', listener: (e: Error) => void): unknown;
  close?(): Promise<unknown>;
  destroy?(): unknown;
  quit?(): Promise<unknown>;
  duplicate(): MinimalClient;
  subscribe(channel: string, listener: (message: string) => void): Promise<void>;
  sSubscribe(channel: string, listener: (message: string) => void): Promise<void>;
  readonly isReady: boolean;
}

async function closeClient(client: MinimalClient): Promise<void> {
  try {
    if (client.close !== undefined) await client.close();
    else if (client.quit !== undefined) await client.quit();
  } catch {
    client.destroy?.();
  }
}

/** `@redis/client`, imported on first use; RedisUnavailableError when it is not installed. */
export async function loadNodeRedis<T>(): Promise<T> {
  try {
    return (await import('@redis/client')) as unknown as T;
  } catch (error) {
    throw new RedisUnavailableError(
      "a Redis cluster needs the '@redis/client' package: npm install @redis/client",
      { cause: error },
    );
  }
}

/**
 * The options of every node-redis connection Sluice opens (one server, Sentinel's master, each
 * Cluster node): RESP2 replies, no offline queue, reconnection for ever backing off to 1 s (a
 * Redis restart or failover must be survived without operator action).
 */
export function clientDefaults(connectTimeoutMs: number | undefined): Record<string, unknown> {
  return {
    RESP: 2,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: connectTimeoutMs ?? 1000,
      reconnectStrategy: (retries: number) => Math.min(50 * 2 ** Math.min(retries, 5), 1000),
    },
  };
}

/** Converts node-redis replies (Buffers only if asked; here strings, numbers, arrays) to RedisReply. */
export function toReply(v: unknown): RedisReply {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' || typeof v === 'number') return v;
  if (Array.isArray(v)) return v.map(toReply);
  if (Buffer.isBuffer(v)) return v.toString('utf8');
  return String(v);
}

/**
 * One command of a link, bounded by the link's deadlines (`p` may settle after its deadline: a
 * failover's reconnection loop; it is ignored then), its reply converted, an error reply raised as
 * RedisReplyError. The plain, Sentinel and Cluster links all send through here.
 */
export async function sendVia(p: () => Promise<unknown>, deadlines: CommandDeadlines): Promise<RedisReply> {
  try {
    return toReply(await deadlines.bound(p()));
  } catch (error) {
    if (isReplyError(error)) throw new RedisReplyError((error as Error).message);
    throw error;
  }
}

/**
 * Connects (waits for the first connection up to connectTimeoutMs, then lets the client keep
 * retrying in the background) and returns the link. Rejects with RedisUnavailableError when the
 * package is missing.
 */
export async function connectNodeRedis(o: NodeRedisOptions): Promise<RedisLink> {
  const mod = await loadNodeRedis<{ createClient: (options: Record<string, unknown>) => MinimalClient }>();
  const timeout = o.commandTimeoutMs ?? DEFAULT_COMMAND_DEADLINE_MS;
  const client = mod.createClient({ url: o.url, ...clientDefaults(o.connectTimeoutMs) });
  const deadlines = new CommandDeadlines(timeout);
  // An 'error' listener is mandatory: without it a dropped connection would crash the process.
  client.on('error', (e) => o.onError?.(e));
  // The first connect may fail (Redis down at boot): the client keeps retrying on its own, and
  // commands reject (503 upstream) until it is back. Wait for it a bounded time only.
  const first = client
    .connect()
    .catch((e: unknown) => o.onError?.(e instanceof Error ? e : new Error(String(e))));
  await boundedWait(first, (o.connectTimeoutMs ?? 1000) * 2);
  // The pub/sub connection, opened on the first subscribe(): a subscribed connection takes no other
  // command, so it is the one other connection (two per instance at most). node-redis subscribes
  // it again by itself after a reconnect. Its first connect waits for Redis as long as it takes.
  let subscriber: MinimalClient | undefined;
  let subscriberUp: Promise<unknown> | undefined;
  return {
    async subscribe(channel, sharded, onMessage) {
      if (subscriber === undefined) {
        const fresh = client.duplicate();
        fresh.on('error', (e) => o.onError?.(e));
        subscriber = fresh;
        subscriberUp = fresh.connect().catch((error: unknown) => {
          if (subscriber === fresh) subscriber = undefined;
          throw error;
        });
      }
      const sub = subscriber;
      await subscriberUp;
      try {
        if (sharded) await sub.sSubscribe(channel, onMessage);
        else await sub.subscribe(channel, onMessage);
      } catch (error) {
        if (isReplyError(error)) throw new RedisReplyError((error as Error).message);
        throw error;
      }
    },
    async send(args) {
      if (!client.isReady) throw new RedisUnavailableError('Redis is not connected');
      // node-redis's `timeout` drops a command still waiting to be written (its queue stays
      // bounded while Redis stalls); the deadline bounds the wait for the reply as well.
      return sendVia(() => client.sendCommand(args, { timeout }), deadlines);
    },
    async close() {
      const sub = subscriber;
      subscriber = undefined;
      subscriberUp?.catch(() => undefined);
      // A subscriber still waiting for its first connection is destroyed, never awaited.
      if (sub !== undefined && !sub.isReady) sub.destroy?.();
      await Promise.all([closeClient(client), sub?.isReady === true ? closeClient(sub) : undefined]);
    },
  };
}
