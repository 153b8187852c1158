/**
 * The one seam between Sluice and Redis: send a command, get its reply. Everything the cluster does
 * goes through `RedisLink.send`, so a user can bring any client (node-redis, ioredis, a Cluster
 * client) with a three-line adapter, and the tests and metrics see every call.
 *
 * Replies follow RESP2 as JavaScript values: simple and bulk strings as `string`, integers as
 * `number`, nil as `null`, arrays as arrays. An error reply rejects with a `RedisReplyError` (or an
 * error `isReplyError` recognises); a timeout or a connection failure rejects with anything else.
 */
import { Histogram } from '../core/observe/histogram.js';

export type RedisReply = string | number | null | RedisReply[];

export interface RedisLink {
  /** Sends one command (`['HSET', key, field, value]`). Commands issued in one tick may be pipelined. */
  send(args: readonly string[]): Promise<RedisReply>;
  /** Closes the connection(s); pending commands reject. */
  close(): Promise<void>;
  /**
   * Optional: subscribes to a pub/sub channel on the link's one dedicated subscriber connection
   * (pub/sub takes a connection over, so the cluster uses at most two per instance: commands +
   * subscriber). `sharded` asks for SSUBSCRIBE (Redis >= 7) instead of SUBSCRIBE. Resolves once
   * subscribed; the subscription must survive reconnects. Without it, listen streams hear only the
   * changes published on their own instance (docs/scale-out.md).
   */
  subscribe?(channel: string, sharded: boolean, onMessage: (message: string) => void): Promise<void>;
  /**
   * Optional: calls `listener` each time the link starts sending to a promoted replica (a
   * failover), whose data may lack the last writes the old master acknowledged (replication is
   * asynchronous). Present only on links that can fail over (Sentinel, Redis Cluster): the task
   * store then keeps its recent writes and sends them again (cluster/recent-writes.ts). Returns
   * what stops the calls.
   */
  onFailover?(listener: () => void): () => void;
}

/** Round-trip times in milliseconds (0.1 ms .. 1 s). */
const RTT_BOUNDS_MS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000];

/**
 * Wraps a link to count errors and time round trips (sluice_cluster_redis_* metrics). `healthy`
 * (reported in stats) turns false on a link error and true again on the next success. Waiting on a
 * dead link is the link's business: the node-redis adapter fails commands at once while it is not
 * ready (no offline queue), so `initialize` and directory misses are refused 503 then; a custom
 * link should do the same.
 */
export class MeasuredLink implements RedisLink {
  readonly #inner: RedisLink;
  readonly rtt = new Histogram(RTT_BOUNDS_MS);
  #errors = 0;
  get errors(): number {
    return this.#errors;
  }
  #commands = 0;
  get commands(): number {
    return this.#commands;
  }
  #healthy = true;
  get healthy(): boolean {
    return this.#healthy;
  }

  constructor(inner: RedisLink) {
    this.#inner = inner;
  }

  async send(args: readonly string[]): Promise<RedisReply> {
    const t0 = performance.now();
    this.#commands++;
    try {
      const r = await this.#inner.send(args);
      this.rtt.observe(performance.now() - t0);
      this.#healthy = true;
      return r;
    } catch (error) {
      // An error *reply* (e.g. NOSCRIPT, WRONGTYPE) means the link itself works.
      if (!isReplyError(error)) {
        this.#errors++;
        this.#healthy = false;
      }
      throw error;
    }
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  /** Whether the inner link can subscribe (the change bus stays local otherwise). */
  get canSubscribe(): boolean {
    return this.#inner.subscribe !== undefined;
  }

  async subscribe(channel: string, sharded: boolean, onMessage: (message: string) => void): Promise<void> {
    const sub = this.#inner.subscribe;
    if (sub === undefined) throw new Error('this RedisLink has no subscribe()');
    await sub.call(this.#inner, channel, sharded, onMessage);
  }
}

/** Redis cannot be reached, or did not answer in time (a request behind it answers 503). */
export class RedisUnavailableError extends Error {
  readonly code = 'redis-unavailable';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RedisUnavailableError';
  }
}

/** An error reply from the server (as opposed to a connection failure or timeout). */
export class RedisReplyError extends Error {
  readonly code = 'redis-reply';
  constructor(message: string) {
    super(message);
    this.name = 'RedisReplyError';
  }
}

export function isReplyError(error: unknown): boolean {
  if (error instanceof RedisReplyError) return true;
  // node-redis's SimpleError/BlobError (named 'Error', told apart by class) and ioredis's ReplyError.
  if (typeof error !== 'object' || error === null) return false;
  const names = [(error as { name?: unknown }).name, error.constructor?.name];
  return names.some(
    (n) => n === 'ErrorReply' || n === 'ReplyError' || n === 'SimpleError' || n === 'BlobError',
  );
}
