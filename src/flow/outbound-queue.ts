/**
 * The frames of one SSE connection that the socket has not taken yet: it fills only while the
 * socket is not writable (write() returned false) and empties on 'drain'.
 *
 * Frames with a coalescing key (a progress token) are compressible: a newer frame with the same key
 * removes the queued older one and goes to the tail, so at most one frame per key waits and the
 * newest one always survives (a progress counter's intermediate values carry nothing; docs/design.md
 * "Invariants"). Moving
 * it to the tail keeps event ids in increasing order on the wire, which resumption relies on.
 * Frames without a key are never dropped here; the caller decides what to do on overflow.
 */

interface Entry {
  frame: string;
  bytes: number;
  key: string | undefined;
  live: boolean;
}

export class OutboundQueue {
  #entries: Entry[] = [];
  #bytes = 0;
  #count = 0;
  readonly #byKey = new Map<string, Entry>();
  /** Frames replaced by a newer one with the same key since creation. */
  coalesced = 0;

  /** Bytes waiting (string length; frames are ASCII-dominated). */
  get bytes(): number {
    return this.#bytes;
  }
  /** Frames waiting. */
  get count(): number {
    return this.#count;
  }

  push(frame: string, key?: string): void {
    const entry: Entry = { frame, bytes: frame.length, key, live: true };
    if (key !== undefined) {
      const old = this.#byKey.get(key);
      if (old?.live) {
        old.live = false;
        // Release the replaced frame now: a consumer that never drains must not pin it.
        old.frame = '';
        this.#bytes -= old.bytes;
        this.#count--;
        this.coalesced++;
      }
      this.#byKey.set(key, entry);
    }
    this.#entries.push(entry);
    this.#bytes += frame.length;
    this.#count++;
    // Dead entries are compacted away once they outnumber the live ones: amortised O(1) per push,
    // and the array stays within twice the number of frames actually waiting.
    if (this.#entries.length > 2 * this.#count + 8) this.#entries = this.#entries.filter((e) => e.live);
  }

  /** Removes and returns every waiting frame, joined in order. */
  drain(): string {
    let out = '';
    for (const e of this.#entries) if (e.live) out += e.frame;
    this.#entries = [];
    this.#bytes = 0;
    this.#count = 0;
    this.#byKey.clear();
    return out;
  }
}
