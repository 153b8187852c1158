/**
 * Paces producers whose consumer cannot take more: a stream with no connection attached (the client
 * is away; events go to the replay store), a blocked socket for compressible progress, or a json
 * answer with nowhere to put related notifications. Their sends resolve on the next tick of one
 * shared timer instead of at once, so a handler that floods an absent or stalled consumer runs at
 * about 1000/intervalMs sends per second instead of spinning a core (perf: the official SDK keeps
 * ~1.5 cores busy after a client leaves; docs/benchmarks.md "Baseline"). The handler still runs — a
 * disconnect is not a cancellation — it just stops burning CPU on events nobody reads.
 */
export class Pacer {
  readonly #ms: number;
  #next: Promise<void> | undefined;

  constructor(intervalMs: number) {
    this.#ms = intervalMs;
  }

  /** Resolves at the next tick (shared by every waiter of this tick). */
  wait(): Promise<void> | undefined {
    if (this.#ms === 0) return undefined;
    this.#next ??= new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        this.#next = undefined;
        resolve();
      }, this.#ms);
      t.unref?.();
    });
    return this.#next;
  }
}
