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
 *
 * Partial output (PartialFrame) is never dropped either: a delta that directly continues the frame
 * at the queue's tail merges into it (text appended, newest event id kept); anything else starts a
 * new entry. Merging only at the tail keeps every frame's ids above those of the frames before it,
 * which is what makes a resume from any delivered id exact (see flow/partial-frame.ts).
 */
import type { PartialFrame } from './partial-frame.js';

interface Entry {
  frame: string;
  bytes: number;
  key: string | undefined;
  live: boolean;
  partial?: PartialFrame | undefined;
}

export class OutboundQueue {
  #entries: Entry[] = [];
  #bytes = 0;
  #count = 0;
  readonly #byKey = new Map<string, Entry>();
  /** Frames replaced by a newer one with the same key since creation. */
  #coalesced = 0;
  get coalesced(): number {
    return this.#coalesced;
  }
  /** Partial-output deltas merged into a queued frame since creation (none of their text is lost). */
  #merged = 0;
  get merged(): number {
    return this.#merged;
  }

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
        this.#coalesced++;
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

  /** Queues a delta of partial output, merging it into the tail frame when it continues it. */
  pushPartial(p: PartialFrame): void {
    const tail = this.#entries[this.#entries.length - 1];
    const t = tail?.partial;
    if (tail?.live && t?.continues(p)) {
      t.absorb(p);
      tail.bytes += p.escaped.length;
      this.#bytes += p.escaped.length;
      this.#merged++;
      return;
    }
    const bytes = p.bytes;
    this.#entries.push({ frame: '', bytes, key: undefined, live: true, partial: p });
    this.#bytes += bytes;
    this.#count++;
  }

  /** Removes and returns every waiting frame, joined in order. */
  drain(): string {
    let out = '';
    for (const e of this.#entries) if (e.live) out += e.partial === undefined ? e.frame : e.partial.render();
    this.#entries = [];
    this.#bytes = 0;
    this.#count = 0;
    this.#byKey.clear();
    return out;
  }
}
