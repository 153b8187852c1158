import { BoundedMap } from './bounded-map.js';

/**
 * A small set whose members expire: bounded in count (the oldest member leaves first) and in time
 * (a member older than `ttlMs` counts as absent and is dropped when met). Used to hold a
 * `notifications/cancelled` that overtook its request (core/session.ts): the client sent the
 * request first, but on another connection, so the cancel can arrive first; held briefly, it still
 * wins when the request comes.
 *
 * Insertion order is expiry order (one ttl for all), so the first entry is always the oldest: every
 * operation is O(1) amortised, and no timer is needed. The entries live in a BoundedMap, not a Map
 * read from its front (which walks every deleted slot V8 has not compacted, flow/bounded-map.ts).
 */
export class ExpiringSet<K> {
  readonly #ttlMs: number;
  readonly #added: BoundedMap<K, number>;

  constructor(max: number, ttlMs: number) {
    this.#ttlMs = ttlMs;
    this.#added = new BoundedMap(max);
  }

  get size(): number {
    return this.#added.size;
  }

  /** Adds `key` at time `now` (a key already held is renewed); drops the oldest beyond `max`. */
  add(key: K, now: number): void {
    this.#expire(now);
    this.#added.renew(key, now);
  }

  /** Whether `key` is held and still fresh at `now`; it leaves the set either way. */
  take(key: K, now: number): boolean {
    this.#expire(now);
    return this.#added.delete(key);
  }

  #expire(now: number): void {
    this.#added.dropOldestWhile((at) => now - at >= this.#ttlMs);
  }
}
