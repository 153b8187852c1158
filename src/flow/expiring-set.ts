/**
 * A small set whose members expire: bounded in count (the oldest member leaves first) and in time
 * (a member older than `ttlMs` counts as absent and is dropped when met). Used to hold a
 * `notifications/cancelled` that overtook its request (core/session.ts): the client sent the
 * request first, but on another connection, so the cancel can arrive first; held briefly, it still
 * wins when the request comes.
 *
 * Insertion order is expiry order (one ttl for all), so the Map's first entry is always the oldest:
 * every operation is O(1) amortised, and no timer is needed.
 */
export class ExpiringSet<K> {
  readonly #max: number;
  readonly #ttlMs: number;
  readonly #added = new Map<K, number>();

  constructor(max: number, ttlMs: number) {
    this.#max = max;
    this.#ttlMs = ttlMs;
  }

  get size(): number {
    return this.#added.size;
  }

  /** Adds `key` at time `now` (a key already held is renewed); drops the oldest beyond `max`. */
  add(key: K, now: number): void {
    this.#expire(now);
    this.#added.delete(key);
    this.#added.set(key, now);
    if (this.#added.size > this.#max) {
      const oldest = this.#added.keys().next();
      if (oldest.done !== true) this.#added.delete(oldest.value);
    }
  }

  /** Whether `key` is held and still fresh at `now`; it leaves the set either way. */
  take(key: K, now: number): boolean {
    this.#expire(now);
    return this.#added.delete(key);
  }

  #expire(now: number): void {
    for (const [key, at] of this.#added) {
      if (now - at < this.#ttlMs) return;
      this.#added.delete(key);
    }
  }
}
