/**
 * The numbered side of a session's stream: each frame's sequence number and event id, and the
 * replay store's copy of the frame, kept before any connection sees it so a resume can replay it
 * (2025-11-25 basic/transports §"Resumability and Redelivery"). Which connection writes the frame,
 * and when, is event-stream.ts's business.
 */
import type { ReplayResult } from '../../events/event-store.js';
import { flat } from '../../flow/flat.js';
import type { PartialFrame } from '../../flow/partial-frame.js';
import type { ProgressEvent } from '../../jsonrpc/progress-json.js';
import { encodeJsonFrame } from '../../sse/encode.js';
import { encodeSeq, eventIdPrefix } from '../../sse/event-id.js';
import { storedDelta } from './partial-output.js';
import { readReplay } from './replay-read.js';
import type { StreamContext } from './stream-context.js';

/** Told when the store lost a frame (the guarded store counted and logged it). */
export interface AppendFailures {
  appendFailed(): void;
}

export class EventLog {
  readonly #ctx: StreamContext;
  readonly #num: number;
  readonly #owner: AppendFailures;
  /** The rejection handler of an asynchronous store's appends; made by the first such append. */
  #onLost: (() => void) | undefined;
  #seq = 0;
  #idPrefix: string | undefined;

  constructor(ctx: StreamContext, num: number, owner: AppendFailures) {
    this.#ctx = ctx;
    this.#num = num;
    this.#owner = owner;
  }

  /** The seq of the newest frame produced. */
  get seq(): number {
    return this.#seq;
  }

  /** The id of this stream's frame `seq`; undefined when events carry no ids (stateless mode). */
  idOf(seq: number): string | undefined {
    const tag = this.#ctx.tag;
    if (tag === undefined) return undefined;
    // The stream's part of the id never changes: encode it once (event-id.ts owns the format).
    this.#idPrefix ??= eventIdPrefix(tag, this.#num);
    return this.#idPrefix + encodeSeq(seq);
  }

  /**
   * The next frame, carrying `json` (and a `retry:` hint): numbered, given its id and stored. A
   * progress notification's `parts` (whose text is `json`) go to the store with it: it may keep
   * them instead of the frame (events/progress-run.ts).
   */
  frame(json: string, retry?: number, parts?: ProgressEvent): string {
    const seq = ++this.#seq;
    const id = this.idOf(seq);
    if (id === undefined) return encodeJsonFrame(undefined, json);
    const frame = encodeJsonFrame(id, json, retry);
    const progress = parts !== undefined && parts.json === json && retry === undefined ? parts : undefined;
    this.#append(seq, frame, undefined, undefined, progress);
    return frame;
  }

  /**
   * The next delta of partial output: numbered and given its id (set on `p`); stored on its own, as
   * a run that replays from any id inside it. The rendered frame when it was stored (rendered once).
   */
  partial(p: PartialFrame): { seq: number; frame: string | undefined } {
    const seq = ++this.#seq;
    const id = this.idOf(seq);
    if (id === undefined) return { seq, frame: undefined };
    p.numbered(id);
    if (this.#ctx.store === undefined) return { seq, frame: undefined };
    const frame = p.render();
    this.#append(seq, frame, p, id, undefined);
    return { seq, frame };
  }

  /** Frames can be read back: the session has a store and its events carry ids. */
  get replayable(): boolean {
    return this.#ctx.store !== undefined && this.#ctx.tag !== undefined;
  }

  /**
   * What the store holds after `from`, checked against every frame produced before this call
   * (replay-read.ts); undefined when the store failed to answer or there is none.
   */
  readBack(from: number, fresh: boolean): Promise<ReplayResult | undefined> {
    const store = this.#ctx.store;
    if (store === undefined) return Promise.resolve(undefined);
    const q = { sessionKey: this.#ctx.sessionKey, stream: this.#num, from, upTo: this.#seq, fresh };
    return readReplay(store, q, this.#ctx.shared.counters);
  }

  /** No more frames: the store frees this stream's buffer after `graceMs`. */
  end(graceMs: number): void {
    const store = this.#ctx.store;
    if (store !== undefined && this.#ctx.tag !== undefined)
      void store.endStream(this.#ctx.sessionKey, this.#num, graceMs);
  }

  /**
   * Keeps a frame for resumption; a failed append is reported (onLost). A progress frame is not
   * flattened: a store that keeps its parts lets the frame go once written, and one that keeps or
   * sends the text flattens it when it first reads it.
   */
  #append(
    seq: number,
    frame: string,
    p: PartialFrame | undefined,
    id: string | undefined,
    progress: ProgressEvent | undefined,
  ): void {
    const store = this.#ctx.store;
    if (store === undefined) return;
    if (progress === undefined) flat(frame);
    const partial = p === undefined || id === undefined ? undefined : storedDelta(p, id);
    const r = store.append(this.#ctx.sessionKey, this.#num, { seq, frame, partial, progress });
    if (r === undefined) return;
    // A synchronous store (the memory one) returns nothing: its streams never make the handler.
    if (this.#onLost === undefined) {
      // Made before it is assigned, so it is born young (core/sdk/bridge-transport.ts, DETACHED).
      const owner = this.#owner;
      const lost = (): void => owner.appendFailed();
      this.#onLost = lost;
    }
    r.then(undefined, this.#onLost);
  }
}
