/**
 * Requests in flight per client, for the 2026-07-28 era. That era has no sessions (MCP 2026-07-28
 * basic/transports/streamable-http), so the per-session bound on requests in flight has nothing to
 * hang on; this counts them per client key instead. An entry exists only while its client has a
 * request in flight (deleted at zero), so the table is bounded by the requests actually running and
 * needs no sweep. Pure: no clock, no I/O.
 */

/** Gives one slot back; calling it again does nothing. */
export type Release = () => void;

export class ConcurrencyLimit {
  /** Slots one key may hold at once. */
  readonly max: number;
  readonly #held = new Map<string, number>();
  #total = 0;
  /** Acquisitions refused because the key already held `max` slots. */
  #refused = 0;
  get refused(): number {
    return this.#refused;
  }

  constructor(max: number) {
    this.max = max;
  }

  /** Slots held, over every key. */
  get held(): number {
    return this.#total;
  }

  /** Keys holding at least one slot. */
  get keys(): number {
    return this.#held.size;
  }

  /** Slots `key` holds. */
  heldBy(key: string): number {
    return this.#held.get(key) ?? 0;
  }

  /** Takes a slot for `key`, or returns undefined (and counts a refusal) when it holds `max` already. */
  acquire(key: string): Release | undefined {
    const n = this.#held.get(key) ?? 0;
    if (n >= this.max) {
      this.#refused++;
      return undefined;
    }
    this.#held.set(key, n + 1);
    this.#total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#total--;
      const left = (this.#held.get(key) ?? 1) - 1;
      if (left <= 0) this.#held.delete(key);
      else this.#held.set(key, left);
    };
  }
}
