/**
 * Limits per client on new sessions: how many sessions one client holds, and how fast it may open
 * them (a token bucket). A client is the authenticated principal when there is one, else the
 * remote address (IPv6 by its /64: one host usually owns a whole /64). Without these, one
 * unauthenticated client could fill `maxSessions` in seconds and lock everyone else out for
 * `sessionIdleMs`. The table is bounded (`maxTracked`) and swept: an entry that holds no session
 * and whose bucket is full again carries no information and is dropped.
 */
import { type Refusal, Refusals } from '../pipeline/refusal.js';

export interface ClientLimitOptions {
  /** Sessions one client may hold at once. */
  maxSessions: number;
  /** Sustained initialize rate per client (tokens per second). */
  initializePerSecond: number;
  /** Initialize burst per client (bucket size). */
  initializeBurst: number;
  /** Clients tracked at once (the table's bound). */
  maxTracked: number;
  /**
   * 2026-07-28 requests one client keeps in flight at once (that era has no sessions, so this
   * replaces the per-session bound there); enforced by src/core/limits/concurrency.ts, not by this class.
   */
  maxConcurrentRequests: number;
}

/** What this class enforces (maxConcurrentRequests is the modern era's, elsewhere). */
type SessionLimitOptions = Omit<ClientLimitOptions, 'maxConcurrentRequests'>;

interface Entry {
  /** Sessions registered and initializations under way. */
  held: number;
  tokens: number;
  at: number;
}

/** What `admit` hands back: settle it once, with whether a session was registered. */
export interface Admission {
  settle(registered: boolean): void;
}

export class ClientLimits {
  readonly options: SessionLimitOptions;
  readonly #table = new Map<string, Entry>();
  /** Refusals by limit, for stats. */
  readonly refused = { sessions: 0, rate: 0 };

  constructor(options: SessionLimitOptions) {
    this.options = options;
  }

  get tracked(): number {
    return this.#table.size;
  }

  /** The key of a client: its principal, else its address. */
  static key(principal: string | undefined, address: string | undefined): string {
    if (principal !== undefined) return `p:${principal}`;
    return `a:${addressKey(address ?? '')}`;
  }

  /**
   * Takes a token and a session slot for `key`, or returns the refusal (429 + Retry-After). A
   * full table with nothing to evict refuses too (503, like the global cap).
   */
  admit(key: string, now: number): Admission | Refusal {
    const o = this.options;
    let e = this.#table.get(key);
    if (e === undefined) {
      if (this.#table.size >= o.maxTracked && !this.#evictOne(now)) return Refusals.tooManySessions(5);
      e = { held: 0, tokens: o.initializeBurst, at: now };
    } else {
      this.#table.delete(key);
      e.tokens = Math.min(o.initializeBurst, e.tokens + ((now - e.at) * o.initializePerSecond) / 1000);
      e.at = now;
    }
    // Re-inserted on every use: the Map's order is then least recently used first.
    this.#table.set(key, e);
    if (e.held >= o.maxSessions) {
      this.refused.sessions++;
      return Refusals.tooManyClientSessions(o.maxSessions, 5);
    }
    if (e.tokens < 1) {
      this.refused.rate++;
      return Refusals.initializeRate(Math.max(1, Math.ceil((1 - e.tokens) / o.initializePerSecond)));
    }
    e.tokens -= 1;
    e.held++;
    const entry = e;
    let settled = false;
    return {
      settle: (registered: boolean) => {
        if (settled) return;
        settled = true;
        if (!registered) entry.held--;
      },
    };
  }

  /** A registered session of `key` ended. */
  release(key: string): void {
    const e = this.#table.get(key);
    if (e !== undefined && e.held > 0) e.held--;
  }

  /** Drops entries that hold nothing and whose bucket has refilled. */
  sweep(now: number): void {
    const o = this.options;
    const refillMs = (o.initializeBurst / o.initializePerSecond) * 1000;
    for (const [key, e] of this.#table) if (e.held === 0 && now - e.at >= refillMs) this.#table.delete(key);
  }

  /** Makes room for one entry: the least recently used that holds nothing. */
  #evictOne(now: number): boolean {
    this.sweep(now);
    if (this.#table.size < this.options.maxTracked) return true;
    for (const [key, e] of this.#table) {
      if (e.held === 0) {
        this.#table.delete(key);
        return true;
      }
    }
    return false;
  }
}

/** An address as a client key: IPv4 as is (also when IPv4-mapped), IPv6 by its first 64 bits. */
export function addressKey(address: string): string {
  const a = address.toLowerCase();
  if (a.startsWith('::ffff:') && a.includes('.')) return a.slice(7);
  if (!a.includes(':')) return a;
  const zone = a.indexOf('%');
  const bare = zone < 0 ? a : a.slice(0, zone);
  const [head = '', tail] = bare.split('::', 2);
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g || '0', 16).toString(16))
    .join(':')}::/64`;
}
