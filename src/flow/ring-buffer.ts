/**
 * A FIFO ring of sequence-numbered entries bounded by count, bytes and age; the replay buffer of
 * one SSE stream. Append and evict are O(1); finding the replay start is O(log n).
 *
 *          head                     head+length
 *           v                           v
 *   [ . . . e0 e1 e2 e3 e4 . . . . . . . ]   slots = capacity (a power of two; index & mask)
 *           oldest            newest
 *
 * Capacity grows by doubling up to the next power of two above `maxCount`, so an idle stream costs
 * a few slots, not maxCount. Sequence numbers must increase.
 */

export interface RingLimits {
  maxCount: number;
  maxBytes: number;
  maxAgeMs: number;
}

export interface RingEntry<T> {
  seq: number;
  bytes: number;
  at: number;
  value: T;
}

export class RingBuffer<T> {
  #slots: (RingEntry<T> | undefined)[] = new Array(4);
  #mask = 3;
  #head = 0;
  #length = 0;
  #bytes = 0;
  /** Entries dropped to respect the limits since creation. */
  evicted = 0;
  readonly #limits: RingLimits;

  constructor(limits: RingLimits) {
    this.#limits = limits;
  }

  get length(): number {
    return this.#length;
  }
  get bytes(): number {
    return this.#bytes;
  }
  /** Sequence number of the oldest retained entry, or undefined when empty. */
  get firstSeq(): number | undefined {
    return this.#slots[this.#head]?.seq;
  }

  push(seq: number, value: T, bytes: number, now: number): void {
    if (this.#length === this.#slots.length) this.#grow();
    this.#slots[(this.#head + this.#length) & this.#mask] = { seq, bytes, at: now, value };
    this.#length++;
    this.#bytes += bytes;
    this.evictExpired(now);
    while (
      this.#length > this.#limits.maxCount ||
      (this.#bytes > this.#limits.maxBytes && this.#length > 0)
    ) {
      this.#shift();
    }
  }

  /** Drops entries older than maxAgeMs. */
  evictExpired(now: number): void {
    const cutoff = now - this.#limits.maxAgeMs;
    while (this.#length > 0) {
      const first = this.#slots[this.#head];
      if (first === undefined || first.at >= cutoff) break;
      this.#shift();
    }
  }

  /** Entries with seq > afterSeq, oldest first. */
  after(afterSeq: number): RingEntry<T>[] {
    let lo = 0;
    let hi = this.#length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const e = this.#slots[(this.#head + mid) & this.#mask];
      if (e !== undefined && e.seq <= afterSeq) lo = mid + 1;
      else hi = mid;
    }
    const out: RingEntry<T>[] = [];
    for (let i = lo; i < this.#length; i++) {
      const e = this.#slots[(this.#head + i) & this.#mask];
      if (e !== undefined) out.push(e);
    }
    return out;
  }

  clear(): void {
    this.#slots = new Array(4);
    this.#mask = 3;
    this.#head = 0;
    this.#length = 0;
    this.#bytes = 0;
  }

  #shift(): void {
    const e = this.#slots[this.#head];
    this.#slots[this.#head] = undefined;
    this.#head = (this.#head + 1) & this.#mask;
    this.#length--;
    this.#bytes -= e?.bytes ?? 0;
    this.evicted++;
  }

  #grow(): void {
    const old = this.#slots;
    const next: (RingEntry<T> | undefined)[] = new Array(old.length * 2);
    for (let i = 0; i < this.#length; i++) next[i] = old[(this.#head + i) & this.#mask];
    this.#slots = next;
    this.#mask = next.length - 1;
    this.#head = 0;
  }
}
