/**
 * A run of consecutive progress notifications of one layout on one stream, stored as one replay
 * entry of values instead of one frame each.
 *
 * A tool reporting progress at full speed puts tens of thousands of frames a second in the replay
 * store, each kept for as long as the stream may be resumed: as strings they were most of what the
 * collector copied and marked per event (docs/benchmarks.md, (b)). A run keeps what varies — up to
 * three values per event (progress, total, message; a value that stays the same, as a total or a
 * message often does, once for the run) — and the layout's constant text once (jsonrpc/progress-json.ts), and renders the
 * frames again on a resume: the same function wrote the live frame, so the bytes are the same, id
 * for id. Unlike merged partial output a replay is not merged: every frame after the cursor comes
 * back as it was sent (each with its own id), so a resume from any id inside a run is exact.
 *
 * Its bytes and its count are the frames' (as if each were stored), so the byte and count bounds
 * are the same as frame by frame; eviction drops a run whole, so a run stops growing at a quarter
 * of the count bound (events/memory-event-store.ts) and at `PROGRESS_RUN_MAX_BYTES`, so eviction
 * never drops more than that at once,
 * and `PROGRESS_RUN_MAX_SPAN_MS` after its first frame, so the age bound (which sees a run's newest
 * frame) is kept to within that. A slow producer's runs are short: the bounds are then as frame by
 * frame; a flood's are long, and cost a few bytes per event instead of a frame.
 */
import type { ProgressEvent, ProgressLayout, ProgressValue } from '../jsonrpc/progress-json.js';
import { encodeJsonFrame } from '../sse/encode.js';
import { encodeSeq } from '../sse/event-id.js';

/** A run takes no more frames beyond this many bytes: eviction granularity. */
export const PROGRESS_RUN_MAX_BYTES = 16 * 1024;
/**
 * A run takes no more frames this long (ms) after its first: the age bound sees a run's newest
 * frame, so its oldest is never more than this past `maxAgeMs` when evicted.
 */
export const PROGRESS_RUN_MAX_SPAN_MS = 1000;

export class ProgressRun {
  readonly layout: ProgressLayout;
  readonly firstSeq: number;
  /** When the first event was appended (ms). */
  readonly #startedAt: number;
  #lastSeq: number;
  /** The event ids' common prefix (the stream's), so no id is kept per event. */
  readonly #idPrefix: string;
  #bytes = 0;
  /** The values of each event, one column per value the layout has (column.ts). */
  readonly #a = new Column();
  readonly #b = new Column();
  readonly #c = new Column();

  private constructor(seq: number, e: ProgressEvent, idPrefix: string, now: number) {
    this.layout = e.layout;
    this.firstSeq = seq;
    this.#startedAt = now;
    this.#lastSeq = seq - 1;
    this.#idPrefix = idPrefix;
  }

  /**
   * A run starting with event `seq` at time `now`, whose stored frame is `frame`; undefined when the frame is not
   * the one the run would render (an id format or text it does not reproduce): the caller keeps
   * the frame itself then.
   */
  static start(seq: number, e: ProgressEvent, frame: string, now: number): ProgressRun | undefined {
    const end = frame.indexOf('\n');
    const seqText = encodeSeq(seq);
    if (!frame.startsWith('id: ') || end < 4 + seqText.length) return undefined;
    const run = new ProgressRun(seq, e, frame.slice(4, end - seqText.length), now);
    run.extend(seq, e, frame.length);
    if (run.#render(0) !== frame) return undefined;
    return run;
  }

  get lastSeq(): number {
    return this.#lastSeq;
  }
  get bytes(): number {
    return this.#bytes;
  }

  /** Whether event `seq` carrying `e` at `now` directly continues this run (and the run may still grow). */
  continues(seq: number, e: ProgressEvent, now: number): boolean {
    return (
      seq === this.#lastSeq + 1 &&
      e.layout === this.layout &&
      this.#bytes < PROGRESS_RUN_MAX_BYTES &&
      now - this.#startedAt <= PROGRESS_RUN_MAX_SPAN_MS
    );
  }

  /** Appends event `seq`, whose frame has `bytes` bytes (the caller checked `continues`). */
  extend(seq: number, e: ProgressEvent, bytes: number): void {
    const n = this.layout.values;
    const k = seq - this.firstSeq;
    if (n > 0) this.#a.set(k, e.a);
    if (n > 1) this.#b.set(k, e.b);
    if (n > 2) this.#c.set(k, e.c);
    this.#lastSeq = seq;
    this.#bytes += bytes;
  }

  /** The frames of the events after `afterSeq` (all of them when it is before the run), appended to `out`. */
  render(afterSeq: number, out: { seq: number; frame: string }[]): void {
    const count = this.#lastSeq - this.firstSeq + 1;
    for (let k = Math.max(0, afterSeq - this.firstSeq + 1); k < count; k++)
      out.push({ seq: this.firstSeq + k, frame: this.#render(k) });
  }

  /** The frame of the run's k-th event, as EventLog wrote it (encodeJsonFrame of its id and text). */
  #render(k: number): string {
    const json = this.layout.text(this.#a.get(k), this.#b.get(k), this.#c.get(k));
    return encodeJsonFrame(this.#idPrefix + encodeSeq(this.firstSeq + k), json);
  }
}

/**
 * The values of one field over a run: one value while every event had the same (a total, a repeated
 * message), an array from the first event that differs.
 */
class Column {
  #first: ProgressValue = null;
  #all: ProgressValue[] | undefined;

  /** Sets the value of event k, the next one (k counts from 0). */
  set(k: number, v: ProgressValue): void {
    if (k === 0) this.#first = v;
    else if (this.#all !== undefined) this.#all.push(v);
    // Identical values give identical JSON (0 and -0 both write "0"); NaN starts an array, harmlessly.
    else if (v !== this.#first) {
      const all = new Array<ProgressValue>(k).fill(this.#first);
      all.push(v);
      this.#all = all;
    }
  }

  get(k: number): ProgressValue {
    return this.#all === undefined ? this.#first : (this.#all[k] ?? null);
  }
}
