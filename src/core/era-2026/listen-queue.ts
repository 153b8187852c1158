/**
 * The backlog of one listen stream while its reader is slow. A change notification carries no
 * payload beyond its kind (and URI), so two pending notifications of the same kind say no more
 * than one: the queue keeps at most one frame per kind and per resource URI, in first-arrival
 * order. Its size is bounded by the stream's filter, so a stalled reader never forces a cut.
 */
export class CoalescingQueue {
  readonly #frames = new Map<string, string>();
  /** Frames dropped because an equal one was already pending. */
  #coalesced = 0;
  get coalesced(): number {
    return this.#coalesced;
  }

  put(key: string, frame: string): void {
    if (this.#frames.has(key)) {
      this.#coalesced++;
      return;
    }
    this.#frames.set(key, frame);
  }

  /** The oldest pending frame, removed; undefined when empty. */
  take(): string | undefined {
    for (const [k, f] of this.#frames) {
      this.#frames.delete(k);
      return f;
    }
    return undefined;
  }

  get size(): number {
    return this.#frames.size;
  }
}
