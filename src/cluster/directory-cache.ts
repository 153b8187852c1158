/**
 * Directory entries a non-owner looked up, kept for a short while so that a session's traffic
 * through one instance costs one Redis round trip, not one per request. Safe to cache: only the
 * owner changes a session, and it answers a stale route with 404 or 421, upon which the entry is
 * dropped. Bounded in count (oldest out first) and age.
 */
import { BoundedMap } from '../flow/bounded-map.js';
import type { DirectoryEntry } from './directory.js';

export class DirectoryCache {
  readonly #ttlMs: number;
  readonly #now: () => number;
  /** Order of the last `set` (flow/bounded-map.ts: evicting the oldest walks no deleted slots). */
  readonly #map: BoundedMap<string, { e: DirectoryEntry; until: number }>;

  constructor(max: number, ttlMs: number, now: () => number = Date.now) {
    this.#map = new BoundedMap(max);
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  get size(): number {
    return this.#map.size;
  }

  get(sid: string): DirectoryEntry | undefined {
    const hit = this.#map.get(sid);
    if (hit === undefined) return undefined;
    if (hit.until <= this.#now()) {
      this.#map.delete(sid);
      return undefined;
    }
    return hit.e;
  }

  set(sid: string, e: DirectoryEntry): void {
    this.#map.renew(sid, { e, until: this.#now() + this.#ttlMs });
  }

  delete(sid: string): void {
    this.#map.delete(sid);
  }
}
