/**
 * A FIFO ring of sequence-numbered entries bounded by count, bytes and age; the replay buffer of
 * one SSE stream. Append and evict are O(1); finding the replay start is O(log n).
 *
 *          head                     head+length
 *           v                           v
 *   [ . . . e0 e1 e2 e3 e4 . . . . . . . ]   slots = capacity (a power of two; index & mask)
 *           oldest            newest
 *
 * Entries are stored as parallel arrays (seq, bytes, time, value) rather than one object each:
 * the ring sits on the per-event path, and an object per event was measurable GC pressure.
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
  #seqs: number[] = [0, 0, 0, 0];
  #sizes: number[] = [0, 0, 0, 0];
  #ats: number[] = [0, 0, 0, 0];
  #values: (T | undefined)[] = [undefined, undefined, undefined, undefined];
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
    return this.#length === 0 ? undefined : this.#seqs[this.#head];
  }

  /** The oldest entry's value, or undefined when empty. */
  get head(): T | undefined {
    return this.#length === 0 ? undefined : this.#values[this.#head];
  }

  /** The newest entry's value, or undefined when empty. */
  get tail(): T | undefined {
    return this.#length === 0 ? undefined : this.#values[(this.#head + this.#length - 1) & this.#mask];
  }

  /**
   * The newest entry grew (its value was extended in place, see events/partial-run.ts): it now ends
   * at `seq` and holds `bytes` more. The limits apply as after a push, the newest entry excepted.
   */
  growTail(seq: number, bytes: number, now: number): void {
    if (this.#length === 0) return;
    const i = (this.#head + this.#length - 1) & this.#mask;
    this.#seqs[i] = seq;
    this.#sizes[i] = (this.#sizes[i] ?? 0) + bytes;
    this.#ats[i] = now;
    this.#bytes += bytes;
    this.evictExpired(now);
    while (
      this.#length > 1 &&
      (this.#length > this.#limits.maxCount || this.#bytes > this.#limits.maxBytes)
    ) {
      this.#shift();
    }
  }

  push(seq: number, value: T, bytes: number, now: number): void {
    if (this.#length > this.#mask) this.#grow();
    const i = (this.#head + this.#length) & this.#mask;
    this.#seqs[i] = seq;
    this.#sizes[i] = bytes;
    this.#ats[i] = now;
    this.#values[i] = value;
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
    while (this.#length > 0 && (this.#ats[this.#head] ?? 0) < cutoff) this.#shift();
  }

  /** Entries with seq > afterSeq, oldest first. */
  after(afterSeq: number): RingEntry<T>[] {
    let lo = 0;
    let hi = this.#length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#seqs[(this.#head + mid) & this.#mask] ?? 0) <= afterSeq) lo = mid + 1;
      else hi = mid;
    }
    const out: RingEntry<T>[] = [];
    for (let k = lo; k < this.#length; k++) {
      const i = (this.#head + k) & this.#mask;
      out.push({
        seq: this.#seqs[i] ?? 0,
        bytes: this.#sizes[i] ?? 0,
        at: this.#ats[i] ?? 0,
        value: this.#values[i] as T,
      });
    }
    return out;
  }

  clear(): void {
    this.#seqs = [0, 0, 0, 0];
    this.#sizes = [0, 0, 0, 0];
    this.#ats = [0, 0, 0, 0];
    this.#values = [undefined, undefined, undefined, undefined];
    this.#mask = 3;
    this.#head = 0;
    this.#length = 0;
    this.#bytes = 0;
  }

  #shift(): void {
    const h = this.#head;
    this.#values[h] = undefined;
    this.#bytes -= this.#sizes[h] ?? 0;
    this.#head = (h + 1) & this.#mask;
    this.#length--;
    this.evicted++;
  }

  #grow(): void {
    const n = (this.#mask + 1) * 2;
    const seqs = new Array<number>(n).fill(0);
    const sizes = new Array<number>(n).fill(0);
    const ats = new Array<number>(n).fill(0);
    const values = new Array<T | undefined>(n).fill(undefined);
    for (let k = 0; k < this.#length; k++) {
      const i = (this.#head + k) & this.#mask;
      seqs[k] = this.#seqs[i] ?? 0;
      sizes[k] = this.#sizes[i] ?? 0;
      ats[k] = this.#ats[i] ?? 0;
      values[k] = this.#values[i];
    }
    this.#seqs = seqs;
    this.#sizes = sizes;
    this.#ats = ats;
    this.#values = values;
    this.#mask = n - 1;
    this.#head = 0;
  }
}
