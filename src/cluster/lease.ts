/**
 * The instance lease: `sl:inst:<incarnation>` = advertised URL, with a PX expiry refreshed every
 * third of the lease. While it exists the instance is taken to be alive, so a request for one of
 * its sessions that cannot reach it gets 503 (wait) rather than 404 (re-initialize). A new
 * incarnation id per process start: a restarted instance on the same address is a different owner,
 * and its predecessor's sessions are never mistaken for its own.
 *
 * Each take and refresh also scores the incarnation in `sl:members` with the lease's end, so the
 * number of live peers is one ZCOUNT on one key: the lease keys themselves spread over every master
 * of a Redis Cluster, where a SCAN reaches only the node it is sent to.
 *
 * A refresh that finds the key gone (Redis restarted or was flushed) re-creates it and calls
 * `onReRegister`, which re-writes the directory entries this instance owns.
 */
import { randomBytes } from 'node:crypto';
import { keys } from './keys.js';
import type { RedisLink } from './redis-link.js';

export function newIncarnation(): string {
  return randomBytes(9).toString('base64url');
}

export interface LeaseOptions {
  incarnation: string;
  address: string;
  leaseMs: number;
  /** The lease key had vanished and was re-created: Redis lost its data. */
  onReRegister: () => void;
  /** A refresh failed (Redis unreachable); `validUntil` tells how long the lease still holds. */
  onRefreshError?: (error: unknown) => void;
  now?: () => number;
}

export type LeaseState = 'held' | 'refresh-failing' | 'lapsed' | 'stopped';

export class Lease {
  readonly #link: RedisLink;
  readonly #o: LeaseOptions;
  readonly #now: () => number;
  #timer: ReturnType<typeof setInterval> | undefined;
  #refreshing = false;
  /** Until when, by this instance's clock, the lease is known to be held (last success + lease). */
  #validUntil = 0;
  get validUntil(): number {
    return this.#validUntil;
  }
  #state: LeaseState = 'lapsed';
  get state(): LeaseState {
    return this.#state;
  }
  #reRegistrations = 0;
  get reRegistrations(): number {
    return this.#reRegistrations;
  }

  constructor(link: RedisLink, o: LeaseOptions) {
    this.#link = link;
    this.#o = o;
    this.#now = o.now ?? Date.now;
  }

  get incarnation(): string {
    return this.#o.incarnation;
  }

  /** Takes the lease (rejects when Redis cannot be reached) and starts refreshing it. */
  async start(): Promise<void> {
    const t0 = this.#now();
    await this.#link.send([
      'SET',
      keys.lease(this.#o.incarnation),
      this.#o.address,
      'PX',
      String(this.#o.leaseMs),
    ]);
    this.#validUntil = t0 + this.#o.leaseMs;
    this.#state = 'held';
    await this.#enlist(t0);
    const period = Math.max(50, Math.floor(this.#o.leaseMs / 3));
    this.#timer = setInterval(() => void this.refresh(), period);
    this.#timer.unref?.();
  }

  /** One refresh (the timer calls it; tests may too). */
  async refresh(): Promise<void> {
    if (this.#state === 'stopped' || this.#refreshing) return;
    this.#refreshing = true;
    const t0 = this.#now();
    const key = keys.lease(this.#o.incarnation);
    const px = String(this.#o.leaseMs);
    try {
      const r = await this.#link.send(['SET', key, this.#o.address, 'PX', px, 'XX']);
      if (r === null) {
        // The key is gone: Redis restarted without our data (or someone flushed it). Take it again.
        await this.#link.send(['SET', key, this.#o.address, 'PX', px]);
        this.#reRegistrations++;
        this.#validUntil = t0 + this.#o.leaseMs;
        this.#state = 'held';
        this.#o.onReRegister();
      } else {
        this.#validUntil = t0 + this.#o.leaseMs;
        this.#state = 'held';
      }
      await this.#enlist(t0);
    } catch (error) {
      this.#state = this.#now() < this.#validUntil ? 'refresh-failing' : 'lapsed';
      this.#o.onRefreshError?.(error);
    } finally {
      this.#refreshing = false;
    }
  }

  /** Whether another instance's lease is held: true/false, or undefined when Redis cannot say. */
  async isAlive(incarnation: string): Promise<boolean | undefined> {
    const left = await this.remainingMs(incarnation);
    return left === undefined ? undefined : left > 0;
  }

  /**
   * How long another instance's lease still holds, in ms: 0 when it has lapsed, Infinity for a key
   * without expiry (set by hand), undefined when Redis cannot say.
   */
  async remainingMs(incarnation: string): Promise<number | undefined> {
    try {
      const r = await this.#link.send(['PTTL', keys.lease(incarnation)]);
      if (typeof r !== 'number') return 0;
      return r === -1 ? Number.POSITIVE_INFINITY : Math.max(0, r);
    } catch {
      return undefined;
    }
  }

  /**
   * How many other instances hold a lease now, by the membership set: members whose lease has not
   * ended (read with this instance's clock; peers' clocks are taken to agree within a lease).
   * Members ended a lease ago or more are removed on the way. Undefined when Redis cannot say.
   */
  async others(): Promise<number | undefined> {
    const now = this.#now();
    try {
      await this.#link.send(['ZREMRANGEBYSCORE', keys.members, '-inf', `(${now - this.#o.leaseMs}`]);
      const live = await this.#link.send(['ZCOUNT', keys.members, `(${now}`, '+inf']);
      const own = await this.#link.send(['ZSCORE', keys.members, this.#o.incarnation]);
      if (typeof live !== 'number') return undefined;
      const ownLive = own !== null && Number(own) > now ? 1 : 0;
      return Math.max(0, live - ownLive);
    } catch {
      return undefined;
    }
  }

  /** Stops refreshing and gives the lease up (DEL), so peers learn at once that this owner is gone. */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#state = 'stopped';
    await Promise.all([
      this.#link.send(['DEL', keys.lease(this.#o.incarnation)]).catch(() => undefined),
      this.#link.send(['ZREM', keys.members, this.#o.incarnation]).catch(() => undefined),
    ]);
  }

  /**
   * Scores this incarnation in the membership set with its lease's end. Only the peer count reads
   * it, so a failure here (on a Redis Cluster the set may live on another node than the lease key)
   * leaves the lease's state alone; the next refresh writes it again.
   */
  async #enlist(t0: number): Promise<void> {
    await this.#link
      .send(['ZADD', keys.members, String(t0 + this.#o.leaseMs), this.#o.incarnation])
      .catch(() => undefined);
  }
}
