/**
 * A run of consecutive partial-output deltas of one request, stored as one replay entry.
 *
 * Deltas are the one kind of event that can be merged in the replay store without losing a cursor:
 * a run holds events `firstSeq … lastSeq` (consecutive on their stream) carrying deltas
 * `firstIndex …` of one request, and a replay after any cursor inside it renders exactly the
 * deltas after the cursor, in frames that each carry the id of their newest delta: what the client
 * would have received had those deltas merged in a blocked socket's queue (flow/partial-frame.ts),
 * same marker `{seq, n}`, same newest-id rule, so a later resume from any of them is exact too.
 *
 * The first replayed frame holds one delta and the frames grow from there (to 16 KiB of text): a
 * resumed connection that is cut again must have delivered a complete event early, or a client
 * without a new cursor may give the stream up (the official SDK 1.x client does: it does not
 * resume a POST stream whose resumed connection died before an event).
 *
 * Stored one event per delta, 20,000 small deltas overran the per-stream count bound long before
 * its byte bound; a run is one entry whose bytes are its text, so partial output is bounded by
 * bytes. A run stops growing at `RUN_MAX_BYTES`, so eviction (whole entries, oldest first) never
 * drops more than that at once.
 */
import type { PartialTemplate } from '../jsonrpc/partial.js';
import { encodeJsonFrame } from '../sse/encode.js';
import { encodeSeq } from '../sse/event-id.js';

/** One delta as the stream hands it to the store (the fields of its PartialFrame when it was sent). */
export interface StoredDelta {
  readonly template: PartialTemplate;
  /** Which request's deltas (runs never cross requests). */
  readonly owner: object;
  /** The delta's index in its request (the marker's `seq`). */
  readonly index: number;
  /** The delta's text, JSON-escaped. */
  readonly escaped: string;
  /** The delta's event id: the stream's id prefix, then its seq (sse/event-id.ts). */
  readonly id: string;
}

/** A run's fixed cost over its text (frame head, marker, id, bookkeeping), for byte accounting. */
export const RUN_OVERHEAD_BYTES = 160;
/** A run takes no more deltas beyond this many text bytes: eviction granularity. */
export const RUN_MAX_BYTES = 64 * 1024;
/** Text bytes of the largest frame a replay renders (the first holds one delta; each doubles). */
export const REPLAY_FRAME_MAX_BYTES = 16 * 1024;

export class PartialRun {
  readonly template: PartialTemplate;
  readonly owner: object;
  readonly firstSeq: number;
  readonly firstIndex: number;
  #lastSeq: number;
  /** The event ids' common prefix (the stream's), so no id is kept per delta. */
  readonly #idPrefix: string;
  #escaped: string;
  /** End offset in `#escaped` of each delta (cumulative). */
  readonly #ends: number[];

  constructor(seq: number, d: StoredDelta) {
    this.template = d.template;
    this.owner = d.owner;
    this.firstSeq = seq;
    this.firstIndex = d.index;
    this.#lastSeq = seq;
    this.#idPrefix = d.id.slice(0, d.id.length - encodeSeq(seq).length);
    this.#escaped = d.escaped;
    this.#ends = [d.escaped.length];
  }

  get lastSeq(): number {
    return this.#lastSeq;
  }
  get bytes(): number {
    return this.#escaped.length + RUN_OVERHEAD_BYTES;
  }

  /** Whether event `seq` carrying `d` directly continues this run (and the run may still grow). */
  continues(seq: number, d: StoredDelta): boolean {
    return (
      seq === this.#lastSeq + 1 &&
      d.owner === this.owner &&
      d.index === this.firstIndex + this.#ends.length &&
      this.#escaped.length < RUN_MAX_BYTES
    );
  }

  /** Appends the delta of event `seq` (the caller checked `continues`); returns the bytes added. */
  extend(seq: number, d: StoredDelta): number {
    this.#escaped += d.escaped;
    this.#ends.push(this.#escaped.length);
    this.#lastSeq = seq;
    return d.escaped.length;
  }

  /**
   * The SSE frames of the deltas after event `afterSeq` (all of them when it is before the run),
   * each with the seq of its newest delta, appended to `out`.
   */
  render(afterSeq: number, out: { seq: number; frame: string }[]): void {
    const ends = this.#ends;
    let k = Math.max(0, Math.min(afterSeq - this.firstSeq + 1, ends.length));
    let budget = 0;
    while (k < ends.length) {
      const from = k === 0 ? 0 : (ends[k - 1] ?? 0);
      // Deltas k … j-1 go in this frame: at least one, and as many as fit the budget.
      let j = k + 1;
      while (j < ends.length && (ends[j] ?? 0) - from <= budget) j++;
      const seq = this.firstSeq + j - 1;
      const text = this.template.text(this.firstIndex + k, j - k, this.#escaped.slice(from, ends[j - 1]));
      out.push({ seq, frame: encodeJsonFrame(this.#idPrefix + encodeSeq(seq), text) });
      budget = Math.min(Math.max(2 * budget, 256), REPLAY_FRAME_MAX_BYTES);
      k = j;
    }
  }
}
