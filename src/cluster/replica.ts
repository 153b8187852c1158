/**
 * The Redis copy of each POST stream's SSE frames, read only when the stream's owner is gone (a
 * resume that reaches another instance after the owner died or shut down). While the owner lives,
 * its in-memory ring is authoritative and this copy is never read.
 *
 * Write-behind: frames are queued and written once per tick (a batch of progress notifications
 * only: within PROGRESS_COPY_DELAY_MS), one EVALSHA per stream per write, on the one connection,
 * as packs (a run of frames per list element, a run of progress notifications
 * as its values: replica-packs.ts), packed as they come so that a tick's frames are not all held
 * until its write (replica-batch.ts). The append is idempotent and order-checked: frames whose seq
 * the copy already holds are skipped (a client library that re-sends a command after a reconnect
 * changes nothing),
 * and a batch that does not follow the last stored seq (an earlier batch was lost in an outage)
 * restarts the copy at that batch, so a later replay from before it reports `evicted` instead of
 * serving a hole. Bounded like the in-memory store: count and bytes per stream (trimmed in the
 * same script), age (the keys' TTL: maxAgeMs while live, the grace period once finished), and a
 * budget over everything this instance has written (oldest finished streams freed first).
 *
 * The standalone GET stream (number 0) is not copied: after its owner is gone its session is gone
 * too (404), so nothing could ever read it, and an idle session then costs Redis only its
 * directory entry.
 */
import type { ReplayResult } from '../events/event-store.js';
import type { ProgressEvent } from '../jsonrpc/progress-json.js';
import { keys } from './keys.js';
import type { RedisLink, RedisReply } from './redis-link.js';
import { CHUNK_FRAMES, ReplicaBatch } from './replica-batch.js';
import { ReplicaLedger } from './replica-ledger.js';
import { unpackAfter } from './replica-packs.js';
import { APPEND, REPLAY } from './replica-scripts.js';

/**
 * How long a batch of progress notifications only may wait for more before it is written (ms).
 *
 * Each write is a Redis round trip, and on a small host its cost was not the command but what it
 * does to the producer (another process woken per write, competing for the same cores): a tool
 * flooding progress paid about 0.25 µs an event with one write per tick, and about nothing more
 * than packing at one write per 5 ms (docs/scale-out.md, "The frame copy"). Progress is the one
 * kind that comes in floods, and the one whose last few milliseconds matter least if the owner dies
 * right then (a later progress event or the owner-lost error supersedes them); a response, a
 * request to the client, any other message and the end of a stream still go at the next tick, and
 * take whatever their stream has queued with them.
 */
export const PROGRESS_COPY_DELAY_MS = 5;

export interface ReplicaLimits {
  maxCount: number;
  maxBytes: number;
  maxAgeMs: number;
  /** Everything this instance keeps in Redis, over all streams (in frame bytes, see `stats.bytes`). */
  budgetBytes: number;
}

export type ReplicaReplay =
  | {
      status: 'ok';
      events: { seq: number; frame: string }[];
      /** The owner ended the stream (its last frame is the answer) before it went away. */
      finished: boolean;
      /** The ids of the requests the stream answers (JSON array), '' when not recorded. */
      requests: string;
    }
  /** The cursor is past what the copy holds (frames delivered but not yet copied when the owner died). */
  | { status: 'ahead'; finished: boolean; requests: string }
  | { status: 'evicted' }
  | { status: 'unknown' };

/** The owner's own frames of a stream (its event store's replay from the start, gaps allowed). */
export type FrameSource = (sid: string, stream: number) => ReplayResult | Promise<ReplayResult>;

/** Copies written again at a time after a failover: bounds the frames held for it at once. */
const REWRITE_WAVE = 32;

/** Counters of a replica that has copied nothing (also what a cluster without one reports). */
export function emptyReplicaStats(): ReplicaStats {
  return { ...emptyCounts(), bytes: 0 };
}

/** What a replica counts itself; `bytes` is its ledger's (replica-ledger.ts). */
type Counts = Omit<ReplicaStats, 'bytes'>;

function emptyCounts(): Counts {
  return {
    framesQueued: 0,
    calls: 0,
    errors: 0,
    framesLost: 0,
    restarts: 0,
    budgetFreed: 0,
    rewritten: 0,
  };
}

export interface ReplicaStats {
  framesQueued: number;
  calls: number;
  errors: number;
  /** Frames that were not copied because Redis failed (the copy restarts after them). */
  framesLost: number;
  /** Batches that found the copy behind (an earlier batch was lost) and restarted it. */
  restarts: number;
  /**
   * Bytes this instance holds in Redis by its own count: the frames' bytes, as the bounds count them
   * (a progress run is stored in far fewer, replica-packs.ts).
   */
  bytes: number;
  budgetFreed: number;
  /** Copies written again whole from the owner's buffer after a failover (`rewrite`). */
  rewritten: number;
}

export class EventReplica {
  readonly #link: RedisLink;
  readonly #limits: ReplicaLimits;
  readonly #now: () => number;
  readonly #onError: (error: unknown) => void;
  #queue = new Map<string, ReplicaBatch>();
  /** The batch of the last append, while queued: a stream's frames come in runs, so most skip the map. */
  #last: ReplicaBatch | undefined;
  /** A drain at the next tick is scheduled. */
  #scheduled = false;
  /** A drain PROGRESS_COPY_DELAY_MS after the first queued progress frame is scheduled. */
  #lazy: ReturnType<typeof setTimeout> | undefined;
  #flushing: Promise<void> = Promise.resolve();
  /** The copies this instance wrote (replica-ledger.ts). */
  readonly #ledger = new ReplicaLedger();
  readonly #counts: Counts = emptyCounts();

  readonly #chunk: number;
  readonly #progressDelayMs: number;

  /**
   * `chunkFrames`: frames a batch packs at a time (replica-batch.ts); `progressDelayMs`: how long
   * progress may wait (PROGRESS_COPY_DELAY_MS). Tests change both.
   */
  constructor(
    link: RedisLink,
    limits: ReplicaLimits,
    o: {
      now?: () => number;
      onError?: (error: unknown) => void;
      chunkFrames?: number;
      progressDelayMs?: number;
    } = {},
  ) {
    this.#link = link;
    this.#limits = limits;
    this.#now = o.now ?? Date.now;
    this.#onError = o.onError ?? (() => undefined);
    this.#chunk = o.chunkFrames ?? CHUNK_FRAMES;
    this.#progressDelayMs = o.progressDelayMs ?? PROGRESS_COPY_DELAY_MS;
  }

  /** What this replica did so far (a snapshot). */
  get stats(): ReplicaStats {
    return { ...this.#counts, bytes: this.#ledger.bytes };
  }

  /**
   * Queues one frame, with its progress parts when it has them (a run of them is copied as values,
   * replica-packs.ts); written with the rest of this tick's frames, or within
   * PROGRESS_COPY_DELAY_MS when the frames queued are all progress. Never waits, never throws.
   */
  append(sid: string, stream: number, seq: number, frame: string, progress?: ProgressEvent): void {
    if (stream === 0) return;
    let b = this.#last;
    if (b === undefined || b.stream !== stream || b.sid !== sid) b = this.#batch(sid, stream, seq);
    if (b.seq + b.size !== seq) {
      // Not the next frame of this batch (cannot happen with one EventStream per stream): write
      // what is queued first, then start a new batch at this seq.
      this.#queue.delete(`${sid}\0${stream}`);
      void this.#send(b); // never rejects: #send counts failures
      b = this.#batch(sid, stream, seq);
    }
    this.#last = b;
    b.append(frame, progress);
    this.#counts.framesQueued++;
    if (progress === undefined) this.#soon();
    else if (!this.#scheduled && this.#lazy === undefined)
      this.#lazy = setTimeout(() => this.#drain(), this.#progressDelayMs);
  }

  /** Records the ids of the requests a stream answers (for the owner-lost errors after a crash). */
  describe(sid: string, stream: number, requestIds: readonly (string | number)[]): void {
    if (stream === 0) return;
    const b = this.#batch(sid, stream, undefined);
    b.describe(requestIds);
    this.#ledger.describe(sid, stream, b.reqs);
    this.#soon();
  }

  /** The stream is finished: the copy lives graceMs more. */
  endStream(sid: string, stream: number, graceMs: number): void {
    if (stream === 0) return;
    this.#batch(sid, stream, undefined).end(graceMs);
    this.#soon();
    this.#ledger.finish(sid, stream, this.#now() + graceMs);
  }

  /** The session ended: delete its copies now. */
  dropSession(sid: string): void {
    this.#last = undefined;
    for (const k of [...this.#queue.keys()]) if (k.startsWith(`${sid}\0`)) this.#queue.delete(k);
    const del: string[] = [];
    for (const n of this.#ledger.dropSession(sid)) del.push(keys.streamMeta(sid, n), keys.streamList(sid, n));
    if (del.length > 0) this.#fire(['DEL', ...del]);
  }

  /** Reads a stream's copy after `afterSeq`. Rejects on Redis errors. */
  async replay(sid: string, stream: number, afterSeq: number): Promise<ReplicaReplay> {
    const r = await REPLAY.run(
      this.#link,
      [keys.streamMeta(sid, stream), keys.streamList(sid, stream)],
      [String(afterSeq)],
    );
    if (!Array.isArray(r)) return { status: 'unknown' };
    if (r[0] === -1) return { status: 'evicted' };
    if (r[0] === 2)
      return { status: 'ahead', finished: r[1] === '1', requests: typeof r[2] === 'string' ? r[2] : '' };
    if (r[0] !== 1) return { status: 'unknown' };
    const events = unpackAfter(r.slice(4), afterSeq, typeof r[3] === 'number' ? r[3] : Number(r[3]));
    if (events === undefined) return { status: 'unknown' };
    return {
      status: 'ok',
      events,
      finished: r[1] === '1',
      requests: typeof r[2] === 'string' ? r[2] : '',
    };
  }

  /** Resolves once everything queued so far was written (or failed). */
  async flush(): Promise<void> {
    this.#drain();
    await this.#flushing;
  }

  /** Forgets finished streams whose copy expired by itself (bookkeeping only). */
  sweep(): void {
    this.#ledger.sweep(this.#now());
  }

  /**
   * After a failover (Redis Sentinel promoted a replica, or a Redis Cluster shard's): the new master
   * may lack the last writes of any copy, since replication is asynchronous, and a copy that lost
   * its tail would serve a resume after this owner's death only up to the hole. So every copy this
   * instance keeps is written again whole from `source`, the owner's own buffer, which holds at
   * least what was copied (the same bounds; frames enter it as they are queued here), replacing
   * what the copy holds in one script call. A live batch sent meanwhile is harmless either way: the
   * append skips frames the copy holds, and the replacement holds every frame sent before it.
   * Resolves when every copy was written or failed (failures are counted, as for any write).
   */
  async rewrite(source: FrameSource): Promise<void> {
    const all = this.#ledger.names();
    for (let i = 0; i < all.length; i += REWRITE_WAVE) {
      const wave: Promise<void>[] = [];
      for (const { sid, stream } of all.slice(i, i + REWRITE_WAVE)) {
        let held: ReplayResult;
        try {
          held = await source(sid, stream);
        } catch (error) {
          this.#onError(error);
          continue;
        }
        // Read after the source answered: the stream may have ended, or its session gone, meanwhile.
        const e = this.#ledger.current(sid, stream);
        const now = this.#now();
        if (e === undefined || (e.expiresAt !== 0 && e.expiresAt <= now)) continue;
        // Unknown to the owner's buffer: a stream with no frame yet (its requests are still written
        // again), or a finished one the buffer freed early (nothing left to write it from).
        if (held.status !== 'ok' && (e.expiresAt !== 0 || e.reqs === '')) continue;
        const events = held.status === 'ok' ? held.events : [];
        const first = events[0];
        const b = new ReplicaBatch(sid, stream, first?.seq ?? 0, this.#chunk);
        for (const ev of events) b.append(ev.frame, ev.progress);
        if (e.reqs !== '') b.restoreRequests(e.reqs);
        if (e.expiresAt !== 0) b.end(e.expiresAt - now);
        this.#counts.rewritten++;
        wave.push(this.#send(b, first !== undefined));
      }
      await Promise.all(wave);
    }
  }

  #batch(sid: string, stream: number, seq: number | undefined): ReplicaBatch {
    const key = `${sid}\0${stream}`;
    let b = this.#queue.get(key);
    if (b === undefined) {
      b = new ReplicaBatch(sid, stream, seq ?? 0, this.#chunk);
      this.#queue.set(key, b);
    } else if (seq !== undefined) {
      b.startAt(seq);
    }
    return b;
  }

  /** Everything queued goes at the next tick. */
  #soon(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.#drain());
  }

  #drain(): void {
    this.#scheduled = false;
    clearTimeout(this.#lazy);
    this.#lazy = undefined;
    this.#last = undefined;
    if (this.#queue.size === 0) return;
    const batches = [...this.#queue.values()];
    this.#queue = new Map();
    const sent = batches.map((b) => this.#send(b));
    this.#flushing = Promise.all(sent).then(() => undefined);
  }

  /** `replace`: the batch is all the copy should hold (a rewrite after a failover), not an append. */
  async #send(b: ReplicaBatch, replace = false): Promise<void> {
    // Frames the bounds would evict at once are never sent: a burst of thousands of frames in one
    // tick (a fast progress loop) costs Redis only the window it keeps.
    const { skip, count: size, packs } = b.take(this.#limits);
    // Nothing of the batch is held across the write: only its names and numbers.
    const { sid, stream } = b;
    const meta = keys.streamMeta(sid, stream);
    const list = keys.streamList(sid, stream);
    if (packs === undefined) {
      // A frame the copy could not split back out (not written by sse/encode.ts; cannot happen):
      // the copy is dropped rather than left with a hole, and the next batch starts it again.
      this.#counts.framesLost += size;
      this.#onError(new Error('replica: a frame that does not end at its first blank line'));
      this.#fire(['DEL', meta, list]);
    }
    const count = packs === undefined ? 0 : size;
    const l = this.#limits;
    this.#counts.calls++;
    this.#ledger.enter(sid, stream);
    try {
      const r = await APPEND.run(
        this.#link,
        [meta, list],
        [
          String(b.seq + skip),
          String(l.maxCount),
          String(l.maxBytes),
          String(l.maxAgeMs),
          b.fin,
          b.reqs,
          replace && count > 0 ? 'replace' : skip > 0 ? '1' : '',
          String(count),
          ...(packs ?? []),
        ],
      );
      if (!Array.isArray(r)) return;
      if (r[0] === 1) this.#counts.restarts++;
      this.#ledger.held(sid, stream, typeof r[2] === 'number' ? r[2] : 0);
      if (this.#ledger.bytes > this.#limits.budgetBytes) this.#enforceBudget();
    } catch (error) {
      this.#counts.errors++;
      this.#counts.framesLost += count;
      this.#onError(error);
    }
  }

  #enforceBudget(): void {
    while (this.#ledger.bytes > this.#limits.budgetBytes) {
      const freed = this.#ledger.freeOldest();
      if (freed === undefined) break;
      this.#counts.budgetFreed++;
      this.#fire(['DEL', keys.streamMeta(freed.sid, freed.stream), keys.streamList(freed.sid, freed.stream)]);
    }
  }

  #fire(args: string[]): void {
    this.#link.send(args).then(undefined, (error: unknown) => {
      this.#counts.errors++;
      this.#onError(error);
    });
  }
}

export type { RedisReply };
