/**
 * A fixed-bucket histogram (Prometheus semantics: cumulative `le` buckets, plus sum and count).
 * Observing is a short linear scan over a dozen bounds and no allocation.
 */
export class Histogram {
  readonly bounds: readonly number[];
  readonly #counts: number[];
  /** Observations per bucket (the last is +Inf), not cumulative. */
  get counts(): readonly number[] {
    return this.#counts;
  }
  #sum = 0;
  get sum(): number {
    return this.#sum;
  }
  #count = 0;
  get count(): number {
    return this.#count;
  }

  constructor(bounds: readonly number[]) {
    this.bounds = bounds;
    this.#counts = new Array(bounds.length + 1).fill(0);
  }

  observe(v: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && v > (b[i] as number)) i++;
    this.#counts[i] = (this.#counts[i] ?? 0) + 1;
    this.#sum += v;
    this.#count++;
  }
}

/** Seconds: from a 1 ms ping to a 5 min tool call. */
export const DURATION_BUCKETS = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300,
] as const;
/** Seconds a stream waited for 'drain': anything above a second is a slow consumer. */
export const STALL_BUCKETS = [0.001, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30] as const;
