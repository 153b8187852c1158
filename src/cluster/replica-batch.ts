/**
 * One tick's frames of one stream on their way to the Redis copy (replica.ts), packed as they come.
 *
 * A fast producer puts a thousand frames in a tick. Held as strings (and their progress parts) until
 * the tick's write, they were alive at every young-generation collection of the tick and copied by
 * it: a member with the copy on carried about 0.9 MB more survivors per scavenge than one without,
 * most of the copy's cost in a flood (docs/scale-out.md, "The frame copy"). So the frames are packed
 * (replica-packs.ts) every `chunk` frames into a sealed chunk, and only the open chunk's strings are
 * held; a sealed chunk is its packs and three numbers.
 *
 * What the bounds would evict at once is still not sent: in the open chunk exactly, frame by frame
 * (evictedAtOnce); a sealed chunk only whole, when its newest frame would be evicted (then all of it
 * would). A sealed chunk the bounds would only cut is sent whole and cut by the script, which trims
 * exactly: this side may send more than is kept, never keep less.
 */
import type { ProgressEvent } from '../jsonrpc/progress-json.js';
import { encodePacks } from './replica-packs.js';

/** Frames per sealed chunk. */
export const CHUNK_FRAMES = 256;

/** A sealed chunk: its packs, and what deciding whether the bounds drop it whole takes. */
interface Chunk {
  packs: string[];
  count: number;
  /** Its frames' UTF-16 length, never more than their UTF-8 bytes (see evictedAtOnce). */
  length: number;
  /** Its newest frame's UTF-16 length. */
  lastLength: number;
}

/** What a batch sends: frames from `seq + skip` on as `packs`, or undefined when one could not be packed. */
export interface BatchPacks {
  skip: number;
  count: number;
  packs: string[] | undefined;
}

export class ReplicaBatch {
  readonly sid: string;
  readonly stream: number;
  #seq: number;
  readonly #chunk: number;
  #frames: string[] = [];
  #parts: (ProgressEvent | undefined)[] = [];
  #sealed: Chunk[] = [];
  #sealedCount = 0;
  /** A frame could not be packed (not written by sse/encode.ts): the batch is not stored. */
  #broken = false;
  #fin = '';
  #reqs = '';

  constructor(sid: string, stream: number, seq: number, chunk = CHUNK_FRAMES) {
    this.sid = sid;
    this.stream = stream;
    this.#seq = seq;
    this.#chunk = chunk;
  }

  /** The first frame's seq. */
  get seq(): number {
    return this.#seq;
  }

  /** How many frames the batch holds. */
  get size(): number {
    return this.#sealedCount + this.#frames.length;
  }

  /** The copy's TTL once the stream ended (ms, as text), '' while it goes on. */
  get fin(): string {
    return this.#fin;
  }

  /** The ids of the requests the stream answers (JSON array), '' when not told. */
  get reqs(): string {
    return this.#reqs;
  }

  /** The stream ended: its copy lives `graceMs` more. */
  end(graceMs: number): void {
    this.#fin = String(Math.max(1, Math.ceil(graceMs)));
  }

  describe(requestIds: readonly (string | number)[]): void {
    this.#reqs = JSON.stringify(requestIds);
  }

  /** The requests' ids as `reqs` gave them (a copy written again after a failover). */
  restoreRequests(reqs: string): void {
    this.#reqs = reqs;
  }

  /** Before any frame: the batch starts at this seq (one made by describe/endStream had none). */
  startAt(seq: number): void {
    if (this.size === 0) this.#seq = seq;
  }

  append(frame: string, progress: ProgressEvent | undefined): void {
    this.#frames.push(frame);
    this.#parts.push(progress);
    if (this.#frames.length >= this.#chunk) this.#seal();
  }

  /** What to send, the bounds' immediate evictions left out (see the module note). */
  take(l: { maxCount: number; maxBytes: number }): BatchPacks {
    const open = this.#frames;
    const openSkip = evictedAtOnce(open, l);
    // Sealed chunks kept from index `from` on: none when the open chunk loses frames (all of them are
    // older); else, newest first, each unless its newest frame would be evicted.
    const from = openSkip > 0 ? this.#sealed.length : this.#firstKept(open, l);
    let skip = openSkip;
    for (let i = 0; i < from; i++) skip += (this.#sealed[i] as Chunk).count;
    const count = this.size - skip;
    if (this.#broken) return { skip, count, packs: undefined };
    const tail = encodePacks(
      this.#seq + this.#sealedCount + openSkip,
      openSkip === 0 ? open : open.slice(openSkip),
      openSkip === 0 ? this.#parts : this.#parts.slice(openSkip),
    );
    if (tail === undefined) return { skip, count, packs: undefined };
    const packs: string[] = [];
    for (let i = from; i < this.#sealed.length; i++) packs.push(...(this.#sealed[i] as Chunk).packs);
    packs.push(...tail);
    return { skip, count, packs };
  }

  /** The oldest sealed chunk the bounds keep, after the whole open chunk (see take). */
  #firstKept(open: readonly string[], l: { maxCount: number; maxBytes: number }): number {
    let after = open.length;
    let afterLength = 0;
    for (const f of open) afterLength += f.length;
    let from = this.#sealed.length;
    for (; from > 0; from--) {
      const c = this.#sealed[from - 1] as Chunk;
      if (after >= l.maxCount || (after > 0 && afterLength + c.lastLength > l.maxBytes)) break;
      after += c.count;
      afterLength += c.length;
    }
    return from;
  }

  #seal(): void {
    const frames = this.#frames;
    const packs = this.#broken ? undefined : encodePacks(this.#seq + this.#sealedCount, frames, this.#parts);
    if (packs === undefined) this.#broken = true;
    let length = 0;
    for (const f of frames) length += f.length;
    this.#sealed.push({
      packs: packs ?? [],
      count: frames.length,
      length,
      lastLength: (frames[frames.length - 1] as string).length,
    });
    this.#sealedCount += frames.length;
    this.#frames = [];
    this.#parts = [];
  }
}

/**
 * How many of a batch's oldest frames the count and byte bounds would drop as soon as the batch is
 * stored. Bytes are counted as UTF-16 length, never more than the UTF-8 bytes the script counts, so
 * a frame dropped here would be dropped there too; the script trims exactly.
 */
export function evictedAtOnce(frames: readonly string[], l: { maxCount: number; maxBytes: number }): number {
  let kept = 0;
  let bytes = 0;
  let i = frames.length;
  while (i > 0 && kept < l.maxCount) {
    const len = (frames[i - 1] as string).length;
    if (kept > 0 && bytes + len > l.maxBytes) break;
    bytes += len;
    kept++;
    i--;
  }
  return i;
}
