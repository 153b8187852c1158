/**
 * A FIFO ring of sequence-numbered entries bounded by count, bytes and age; the replay buffer of
 * one SSE stream. Append and evict are O(1); finding the replay start is O(log n).
 *
 * The count bound counts what each entry says it holds: a frame 1, a run of n progress frames n
 * (events/progress-run.ts: `replay.maxCount` bounds the events a resume can return, as in the
 * Redis store), merged partial output 1 however many deltas it took (events/partial-run.ts).
 *
 *          head                     head+length
 *           v                           v
 *   [ . . . e0 e1 e2 e3 e4 . . . . . . . ]   slots = capacity (a power of two; index & mask)
 *           oldest            newest
 *
 * Entries are stored as parallel arrays rather than one object each: the ring sits on the
 * per-event path, and an object per event was measurable GC pressure. The numbers of a slot (seq,
 * bytes, time, count) sit side by side in one Float64Array, the values in an array: a grow is then two
 * block copies into zeroed memory, where three number[] arrays filled and copied element by
 * element (and turned from small integers to doubles by the first timestamp) made growing a
 * flooding stream's ring a few percent of its CPU per event; one typed array, not three, keeps an
 * idle stream's ring as small as before.
 * Capacity grows by doubling up to the next power of two above `maxCount`, so an idle stream costs
 * a few slots, not maxCount, and an empty ring none. Sequence numbers must increase.
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

/** Numbers kept per slot in `#nums`: seq, bytes, time, count. */
const NUMS = 4;
/**
 * Slots of a ring's first arrays: two (a priming event and one answer, the common stream) keep its
 * numbers within the size V8 stores inside the heap (64 bytes), with no separate buffer to allocate.
 */
const INITIAL_SLOTS = 2;
/**
 * What an empty ring holds until its first push: nothing of its own. An idle stream's ring (the
 * memory store keeps a stream's priming event beside it) then costs its object alone, not a
 * typed array, its buffer and a values array (about 220 bytes; docs/benchmarks.md, idle memory).
 * Never written: the first push grows the ring first.
 */
const NO_NUMS = new Float64Array(0);
const NO_VALUES: readonly undefined[] = [];

export class RingBuffer<T> {
  /** Per slot i: seq at [4i], bytes at [4i+1], time at [4i+2], count at [4i+3] (see the file comment). */
  #nums = NO_NUMS;
  #values = NO_VALUES as (T | undefined)[];
  /** Capacity - 1: -1 while the ring has no arrays of its own (the first push grows it). */
  #mask = -1;
  #head = 0;
  #length = 0;
  #bytes = 0;
  /** The entries' counts summed: what the count bound applies to. */
  #count = 0;
  /** Entries dropped to respect the limits since creation. */
  #evicted = 0;
  get evicted(): number {
    return this.#evicted;
  }
  #limits: RingLimits;

  constructor(limits: RingLimits) {
    this.#limits = limits;
  }

  /** Reads its bounds from `limits` from now on (a store gives a stream its own when it grows them). */
  bound(limits: RingLimits): void {
    this.#limits = limits;
  }

  get length(): number {
    return this.#length;
  }
  get bytes(): number {
    return this.#bytes;
  }
  /** What the entries hold, counted as the count bound counts (see the file comment). */
  get count(): number {
    return this.#count;
  }
  /** Sequence number of the oldest retained entry, or undefined when empty. */
  get firstSeq(): number | undefined {
    return this.#length === 0 ? undefined : this.#nums[this.#head * NUMS];
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
   * at `seq` and holds `bytes` and `count` more. The limits apply as after a push, the newest entry
   * excepted.
   */
  growTail(seq: number, bytes: number, now: number, count = 0): void {
    if (this.#length === 0) return;
    const b = ((this.#head + this.#length - 1) & this.#mask) * NUMS;
    const nums = this.#nums;
    nums[b] = seq;
    nums[b + 1] = (nums[b + 1] ?? 0) + bytes;
    nums[b + 2] = now;
    nums[b + 3] = (nums[b + 3] ?? 0) + count;
    this.#bytes += bytes;
    this.#count += count;
    this.evictExpired(now);
    while (this.#length > 1 && (this.#count > this.#limits.maxCount || this.#bytes > this.#limits.maxBytes)) {
      this.#shift();
    }
  }

  push(seq: number, value: T, bytes: number, now: number, count = 1): void {
    if (this.#length > this.#mask) this.#grow();
    const i = (this.#head + this.#length) & this.#mask;
    const nums = this.#nums;
    const b = i * NUMS;
    nums[b] = seq;
    nums[b + 1] = bytes;
    nums[b + 2] = now;
    nums[b + 3] = count;
    this.#values[i] = value;
    this.#length++;
    this.#bytes += bytes;
    this.#count += count;
    this.evictExpired(now);
    while (
      (this.#count > this.#limits.maxCount && this.#length > 0) ||
      (this.#bytes > this.#limits.maxBytes && this.#length > 0)
    ) {
      this.#shift();
    }
  }

  /** Drops entries older than maxAgeMs. */
  evictExpired(now: number): void {
    const cutoff = now - this.#limits.maxAgeMs;
    while (this.#length > 0 && (this.#nums[this.#head * NUMS + 2] ?? 0) < cutoff) this.#shift();
  }

  /** Entries with seq > afterSeq, oldest first. */
  after(afterSeq: number): RingEntry<T>[] {
    let lo = 0;
    let hi = this.#length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#nums[((this.#head + mid) & this.#mask) * NUMS] ?? 0) <= afterSeq) lo = mid + 1;
      else hi = mid;
    }
    const out: RingEntry<T>[] = [];
    for (let k = lo; k < this.#length; k++) {
      const i = (this.#head + k) & this.#mask;
      const b = i * NUMS;
      out.push({
        seq: this.#nums[b] ?? 0,
        bytes: this.#nums[b + 1] ?? 0,
        at: this.#nums[b + 2] ?? 0,
        value: this.#values[i] as T,
      });
    }
    return out;
  }

  clear(): void {
    this.#nums = NO_NUMS;
    this.#values = NO_VALUES as (T | undefined)[];
    this.#mask = -1;
    this.#head = 0;
    this.#length = 0;
    this.#bytes = 0;
    this.#count = 0;
  }

  #shift(): void {
    const h = this.#head;
    this.#values[h] = undefined;
    this.#bytes -= this.#nums[h * NUMS + 1] ?? 0;
    this.#count -= this.#nums[h * NUMS + 3] ?? 0;
    this.#head = (h + 1) & this.#mask;
    this.#length--;
    this.#evicted++;
  }

  #grow(): void {
    const cap = this.#mask + 1;
    const n = cap === 0 ? INITIAL_SLOTS : cap * 2;
    // Oldest first from slot 0: the slots head … cap-1, then 0 … the rest (each a block copy).
    const nums = new Float64Array(n * NUMS);
    const h = this.#head;
    const first = Math.min(this.#length, cap - h);
    nums.set(this.#nums.subarray(h * NUMS, (h + first) * NUMS), 0);
    nums.set(this.#nums.subarray(0, (this.#length - first) * NUMS), first * NUMS);
    const values = new Array<T | undefined>(n);
    for (let k = 0; k < this.#length; k++) values[k] = this.#values[(h + k) & this.#mask];
    this.#nums = nums;
    this.#values = values;
    this.#mask = n - 1;
    this.#head = 0;
  }
}
