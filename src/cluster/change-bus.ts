/**
 * The cluster's change bus: what one instance publishes for `subscriptions/listen` streams (MCP
 * 2026-07-28 basic/patterns/subscriptions: list changes, resource updates) reaches the listen streams
 * of every instance. Behind a round-robin balancer a client's listen stream and the request that
 * changed something rarely land on the same instance.
 *
 * - Local first: a change is delivered to this instance's streams synchronously, then shared on one
 *   Redis channel. Redis being down never delays or loses local delivery; what could not be shared
 *   is counted (`unshared`).
 * - Exactly once per stream, no loops: a message carries its publisher's incarnation; an instance
 *   drops its own echo (it delivered those locally already) and never re-publishes what it
 *   received (received changes go to the local bus only).
 * - Bounded: at most MAX_INFLIGHT publishes wait on Redis; beyond that a change is counted unshared
 *   rather than queued. Messages from Redis are size-capped and shape-checked before delivery.
 * - Redis pub/sub is at-most-once: a change published while a peer's subscriber connection is down
 *   does not reach that peer's streams (list changes are hints; clients re-list on the next one).
 *
 * SPUBLISH/SSUBSCRIBE (sharded pub/sub, Redis >= 7) when the server has them: on a Redis Cluster a
 * classic PUBLISH is broadcast to every node over the cluster bus, a sharded one stays in the shard
 * owning the channel's slot. On a single Redis the two behave the same; before Redis 7 PUBLISH.
 */

import { type ChangeBus, type ChangeEvent, LocalChangeBus } from '../core/change-bus.js';
import type { Logger } from '../core/options.js';
import { Tally } from '../flow/tally.js';
import { keys } from './keys.js';
import { isReplyError, type MeasuredLink } from './redis-link.js';

/** Publishes waiting on Redis at once; more are counted unshared instead of queued. */
export const MAX_INFLIGHT = 1024;
/** Longest message accepted from the channel (a resource URI is at most 4 KiB in a listen filter). */
export const MAX_MESSAGE_BYTES = 8192;

export type PubSubMode = 'sharded' | 'classic';

export interface BusStats {
  /** Changes published to Redis for the other instances. */
  published: number;
  /** Changes from other instances delivered to this instance's listen streams. */
  received: number;
  /** Changes delivered locally but not shared (Redis down, no subscribe on the link, backlog full). */
  unshared: number;
  /** Messages from the channel dropped as malformed. */
  malformed: number;
  /** Whether the subscriber connection is subscribed. */
  subscribed: boolean;
  mode: PubSubMode | 'local';
}

const KINDS = new Set(['tools', 'prompts', 'resources']);

/** The change a channel message carries, or undefined when it is not one (untrusted input). */
export function parseMessage(raw: string): { origin: string; event: ChangeEvent } | undefined {
  if (raw.length > MAX_MESSAGE_BYTES) return undefined;
  let m: unknown;
  try {
    m = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof m !== 'object' || m === null) return undefined;
  const { o, k, u } = m as Record<string, unknown>;
  if (typeof o !== 'string' || o.length === 0 || o.length > 128) return undefined;
  if (typeof k === 'string' && KINDS.has(k) && u === undefined)
    return { origin: o, event: { kind: k as 'tools' | 'prompts' | 'resources' } };
  if (k === 'resource' && typeof u === 'string' && u.length > 0)
    return { origin: o, event: { kind: 'resource', uri: u } };
  return undefined;
}

export function encodeMessage(origin: string, event: ChangeEvent): string {
  return JSON.stringify(
    event.kind === 'resource' ? { o: origin, k: 'resource', u: event.uri } : { o: origin, k: event.kind },
  );
}

export class RedisChangeBus implements ChangeBus {
  readonly #local = new LocalChangeBus();
  readonly #origin: string;
  readonly #forceMode: PubSubMode | undefined;
  #link: MeasuredLink | undefined;
  #logger: Logger | undefined;
  #mode: PubSubMode | undefined;
  #subscribing: Promise<void> | undefined;
  #subscribed = false;
  #stopped = false;
  #inflight = 0;
  readonly #counts = new Tally(['published', 'received', 'unshared', 'malformed'] as const);

  /** `mode` forces the pub/sub flavour (tests); by default it is detected once at start. */
  constructor(origin: string, mode?: PubSubMode) {
    this.#origin = origin;
    this.#forceMode = mode;
  }

  publish(event: ChangeEvent): void {
    this.#local.publish(event);
    this.#share(event);
  }

  subscribe(listener: (event: ChangeEvent) => void): () => void {
    return this.#local.subscribe(listener);
  }

  /**
   * Starts sharing over `link`: picks the pub/sub flavour and subscribes. Resolves once subscribed,
   * or at once when the link cannot subscribe (local only, logged). A failure is retried by
   * `retry()` (the cluster's housekeeping).
   */
  start(link: MeasuredLink, logger: Logger | undefined): Promise<void> {
    this.#link = link;
    this.#logger = logger;
    if (!link.canSubscribe) {
      logger?.warn('cluster.bus_local_only', {
        reason: 'the RedisLink has no subscribe(): listen streams hear changes of their own instance only',
      });
      return Promise.resolve();
    }
    return this.retry();
  }

  /** Subscribes if not yet subscribed (idempotent; never rejects). */
  retry(): Promise<void> {
    const link = this.#link;
    if (link === undefined || !link.canSubscribe || this.#subscribed || this.#stopped)
      return Promise.resolve();
    this.#subscribing ??= this.#subscribe(link).finally(() => {
      this.#subscribing = undefined;
    });
    return this.#subscribing;
  }

  async #subscribe(link: MeasuredLink): Promise<void> {
    try {
      this.#mode ??= this.#forceMode ?? (await detectMode(link));
      await link.subscribe(keys.bus, this.#mode === 'sharded', (raw) => this.#onMessage(raw));
      if (!this.#stopped) this.#subscribed = true;
    } catch (error) {
      this.#logger?.warn('cluster.bus_subscribe_failed', { error: String(error) });
    }
  }

  stop(): void {
    this.#stopped = true;
    this.#subscribed = false;
  }

  stats(): BusStats {
    const link = this.#link;
    return {
      ...this.#counts.read(),
      subscribed: this.#subscribed,
      mode: link === undefined || !link.canSubscribe ? 'local' : (this.#mode ?? 'local'),
    };
  }

  #share(event: ChangeEvent): void {
    const link = this.#link;
    const mode = this.#mode;
    // Before the flavour is known (Redis down since boot) a publish could go to the wrong channel kind.
    if (link === undefined || mode === undefined || this.#stopped || this.#inflight >= MAX_INFLIGHT) {
      this.#counts.add('unshared');
      return;
    }
    const cmd = mode === 'sharded' ? 'SPUBLISH' : 'PUBLISH';
    this.#inflight++;
    link
      .send([cmd, keys.bus, encodeMessage(this.#origin, event)])
      .then(
        () => {
          this.#counts.add('published');
        },
        () => {
          this.#counts.add('unshared');
        },
      )
      .finally(() => {
        this.#inflight--;
      });
  }

  #onMessage(raw: string): void {
    if (this.#stopped) return;
    const m = parseMessage(raw);
    if (m === undefined) {
      this.#counts.add('malformed');
      return;
    }
    // Our own echo: those streams were served at publish time.
    if (m.origin === this.#origin) return;
    this.#counts.add('received');
    // Local delivery only: a received change is never published again.
    this.#local.publish(m.event);
  }
}

/** Sharded pub/sub when the server knows SPUBLISH (Redis >= 7), classic otherwise. */
async function detectMode(link: MeasuredLink): Promise<PubSubMode> {
  try {
    const r = await link.send(['COMMAND', 'INFO', 'SPUBLISH']);
    return Array.isArray(r) && Array.isArray(r[0]) ? 'sharded' : 'classic';
  } catch (error) {
    // COMMAND refused (some managed services rename or forbid it): the classic flavour works everywhere.
    if (isReplyError(error)) return 'classic';
    throw error;
  }
}
