/**
 * The default EventStore: one RingBuffer per (session, stream), bounded by count, bytes and age,
 * and a budget for the whole store.
 *
 * Sizing of the per-stream defaults: the ring's depth is the longest disconnect a client can
 * recover from. A busy tool emits on the order of 20 events/s after progress coalescing; a proxy
 * reconnect plus the client's `retry` and backoff takes seconds, and 30 s is a generous outage.
 * 20/s x 30 s = 600, rounded up to 1024 events. Bytes cap at 1 MiB per stream (so 4 KiB events
 * keep ~256 of them) and age at 5 minutes, the same as the orphan timeout: after that nobody will
 * resume anyway.
 *
 * A finished stream is kept for a grace period (60 s by default, set by the caller) so a client can
 * still resume it and collect its result. Every SSE answer leaves one behind, so at thousands of
 * answers per second they would add up: the store-wide budget (64 MiB, 10,000 finished streams by
 * default) frees the oldest finished streams first when it is exceeded. Live streams are bounded by
 * their own limits and are never freed early.
 *
 * Partial output is stored in runs (events/partial-run.ts): consecutive deltas of a request form one
 * entry bounded by bytes, so a long generation's thousands of small deltas do not overrun the count
 * bound. Progress notifications that come with their parts (jsonrpc/progress-json.ts) are stored
 * in runs of values (events/progress-run.ts), for the collector's sake; unlike merged partial
 * output each of their frames still counts toward the count bound, since a resume returns each.
 * And a stream's bounds follow its measured rate: guessed limits fit the 20 events/s above,
 * not a tool flooding deltas at full speed while socket and proxy buffers hold megabytes the client
 * has not read. Each stream's bounds grow to what it produces at its peak rate (flow/rate-meter.ts)
 * during `limits.tolerableDisconnectMs` (30 s), never below `limits` and never above a quarter of
 * `maxTotalBytes` or what the budget has left (a count bound grows in the same proportion as the byte bound). `stats()` reports
 * how many live streams are sized above the configured limits and the largest bound.
 *
 * A stream's first event, while it is all the stream holds, is held alone beside its ring, which
 * then allocates nothing: an idle GET stream's priming event, mostly (events/stream-log.ts).
 */
import { BoundedMap } from '../flow/bounded-map.js';
import { flat } from '../flow/flat.js';
import { RateMeter } from '../flow/rate-meter.js';
import type { RingLimits } from '../flow/ring-buffer.js';
import type { ProgressEvent } from '../jsonrpc/progress-json.js';
import type { EventStore, ReplayResult, StoredEvent } from './event-store.js';
import { PartialRun, RUN_OVERHEAD_BYTES } from './partial-run.js';
import { ProgressRun } from './progress-run.js';
import {
  expireAlone,
  fillOf,
  firstHeld,
  heldBytes,
  heldEvents,
  holdAlone,
  holdsAlone,
  intoRing,
  newStreamLog,
  type StreamLog,
} from './stream-log.js';
import { StreamTable } from './stream-table.js';

/**
 * Per-stream bounds: the ring's, and the disconnect (ms) a stream's bounds are sized to cover at
 * its measured peak rate (0: fixed bounds).
 */
export interface ReplayLimits extends RingLimits {
  tolerableDisconnectMs: number;
}

export const DEFAULT_REPLAY_LIMITS: ReplayLimits = {
  maxCount: 1024,
  maxBytes: 1024 * 1024,
  maxAgeMs: 5 * 60_000,
  tolerableDisconnectMs: 30_000,
};

/** The store-wide budget's defaults (see the file comment); `replayBudget` in the server options. */
export const DEFAULT_REPLAY_BUDGET = {
  maxTotalBytes: 64 * 1024 * 1024,
  maxFinishedStreams: 10_000,
} as const;

export interface MemoryEventStoreOptions {
  limits?: Partial<ReplayLimits>;
  /** Bytes held by the whole store before finished streams are freed early. @defaultValue 64 MiB */
  maxTotalBytes?: number;
  /** Finished streams kept for resumption before the oldest are freed early. @defaultValue 10000 */
  maxFinishedStreams?: number;
  now?: () => number;
  /** How often expired entries and finished streams are swept. @defaultValue 10_000 ms */
  sweepMs?: number;
  /**
   * @internal The test seam of test/unit/memory-event-store-alone.test.ts: false puts every event
   * into its stream's ring at once (the behaviour the default is held against). @defaultValue true
   */
  holdFirstAlone?: boolean;
}

export interface EventStoreStats {
  streams: number;
  /** Entries held for replay: a frame, or a run of frames (events/partial-run.ts, progress-run.ts). */
  events: number;
  bytes: number;
  /** Events dropped by the per-stream bounds. */
  evictions: number;
  /** Finished streams freed before their grace ended, to respect the store-wide budget. */
  streamsEvicted: number;
  /** Live streams whose bounds their measured rate raised above the configured limits. */
  streamsSized: number;
  /** The largest byte bound of a live stream now. */
  largestStreamBound: number;
}

export class MemoryEventStore implements EventStore {
  readonly #logs = new StreamTable<StreamLog>();
  /**
   * Finished streams, oldest first (insertion order); bounded here by #enforceBudget. Not a Set read
   * from its front, which walks every deleted slot V8 has not compacted (flow/bounded-map.ts).
   */
  readonly #finished = new BoundedMap<StreamLog, true>(Number.POSITIVE_INFINITY);
  readonly #limits: ReplayLimits;
  /** The configured ring bounds, shared by every stream not sized above them. */
  readonly #ringLimits: RingLimits;
  readonly #maxStreamBytes: number;
  readonly #maxTotalBytes: number;
  readonly #maxFinished: number;
  readonly #now: () => number;
  readonly #sweepMs: number;
  readonly #holdFirstAlone: boolean;
  #timer: ReturnType<typeof setInterval> | undefined;
  #totalBytes = 0;
  #evictionsOfFreed = 0;
  /** Events aged out while held alone beside their stream's ring (`#expire`). */
  #evictedAlone = 0;
  #streamsEvicted = 0;
  #last: StreamLog | undefined;

  constructor(options: MemoryEventStoreOptions = {}) {
    this.#limits = { ...DEFAULT_REPLAY_LIMITS, ...options.limits };
    const { maxCount, maxBytes, maxAgeMs } = this.#limits;
    this.#ringLimits = { maxCount, maxBytes, maxAgeMs };
    this.#maxTotalBytes = options.maxTotalBytes ?? DEFAULT_REPLAY_BUDGET.maxTotalBytes;
    this.#maxStreamBytes = Math.max(this.#limits.maxBytes, Math.floor(this.#maxTotalBytes / 4));
    this.#maxFinished = options.maxFinishedStreams ?? DEFAULT_REPLAY_BUDGET.maxFinishedStreams;
    this.#now = options.now ?? Date.now;
    this.#sweepMs = options.sweepMs ?? 10_000;
    this.#holdFirstAlone = options.holdFirstAlone !== false;
  }

  append(sessionId: string, streamId: number, event: StoredEvent): void {
    // Events come in runs on one stream: a one-entry cache saves two map lookups per event.
    let log = this.#last;
    if (log === undefined || log.sessionId !== sessionId || log.streamId !== streamId) {
      log = this.#open(sessionId, streamId);
      this.#last = log;
    }
    const now = this.#now();
    const before = heldBytes(log);
    if (log.alone !== undefined) intoRing(log);
    if (this.#holdFirstAlone && holdsAlone(log, event, this.#limits.tolerableDisconnectMs)) {
      holdAlone(log, event, now);
    } else {
      this.#push(log, event, now);
    }
    this.#totalBytes += heldBytes(log) - before;
    if (event.seq > log.lastSeq) log.lastSeq = event.seq;
    if (this.#totalBytes > this.#maxTotalBytes) this.#enforceBudget();
  }

  /** Keeps `event` in the stream's ring (as a frame, or in a run of partial output or progress). */
  #push(log: StreamLog, event: StoredEvent, now: number): void {
    const d = event.partial;
    const pe = event.progress;
    const tail = log.ring.tail;
    let added: number;
    if (d !== undefined && tail instanceof PartialRun && tail.continues(event.seq, d)) {
      added = tail.extend(event.seq, d);
      log.ring.growTail(event.seq, added, now);
    } else if (d !== undefined) {
      const run = new PartialRun(event.seq, d);
      added = run.bytes;
      log.ring.push(event.seq, run, added, now);
    } else {
      // Frames are ASCII-dominated; string length is a close, allocation-free proxy for bytes.
      // A progress frame kept as values counts the same bytes (events/progress-run.ts).
      added = event.frame.length;
      const run =
        pe === undefined ? undefined : this.#progressRun(log, tail, event.seq, pe, event.frame, now);
      // Each progress frame counts toward the count bound, in a run or not (flow/ring-buffer.ts).
      if (run !== undefined && run === tail) log.ring.growTail(event.seq, added, now, 1);
      // A progress frame kept as text is flattened here (the stream's log left it to the store).
      else log.ring.push(event.seq, run ?? flat(event.frame), added, now);
    }
    log.rate ??= new RateMeter();
    log.rate.note(d === undefined ? added : d.escaped.length + RUN_OVERHEAD_BYTES, now);
    this.#size(log);
  }

  replay(
    sessionId: string,
    streamId: number,
    afterSeq: number,
    options?: { allowGap?: boolean },
  ): ReplayResult {
    const log = this.#logs.get(sessionId, streamId);
    const now = this.#now();
    // A finished stream past its grace period is gone, whether or not the sweep has run yet.
    if (log === undefined || log.freeAt <= now || afterSeq > log.lastSeq) return { status: 'unknown' };
    this.#expire(log, now);
    const first = firstHeld(log);
    // Entries seq <= afterSeq were delivered; a gap exists if the first retained one is beyond afterSeq+1.
    const gap = first === undefined ? afterSeq < log.lastSeq : first > afterSeq + 1;
    if (gap && options?.allowGap !== true) return { status: 'evicted' };
    const events: StoredEvent[] = [];
    const alone = log.alone;
    if (alone !== undefined && alone.seq > afterSeq) events.push({ seq: alone.seq, frame: alone.frame });
    for (const e of log.ring.after(afterSeq)) {
      if (typeof e.value === 'string') events.push({ seq: e.seq, frame: e.value });
      else e.value.render(afterSeq, events);
    }
    return { status: 'ok', events };
  }

  endStream(sessionId: string, streamId: number, graceMs: number): void {
    const log = this.#logs.get(sessionId, streamId);
    if (log === undefined) return;
    log.freeAt = this.#now() + graceMs;
    this.#finished.set(log, true);
    if (this.#finished.size > this.#maxFinished) this.#enforceBudget();
  }

  fill(sessionId: string, streamId: number): number {
    const log = this.#logs.get(sessionId, streamId);
    if (log === undefined) return 0;
    return fillOf(log);
  }

  dropSession(sessionId: string): void {
    for (const log of this.#logs.dropSession(sessionId)) this.#release(log);
    if (this.#logs.size === 0) this.#disarm();
  }

  /** Frees finished streams past their grace and entries past their age. Runs on a timer too. */
  sweep(): void {
    const now = this.#now();
    this.#logs.sweep((log) => {
      this.#expire(log, now);
      if (log.freeAt > now) return false;
      this.#release(log);
      return true;
    });
    if (this.#logs.size === 0) this.#disarm();
  }

  stats(): EventStoreStats {
    let streams = 0;
    let events = 0;
    let evictions = this.#evictionsOfFreed + this.#evictedAlone;
    let streamsSized = 0;
    let largestStreamBound = 0;
    for (const log of this.#logs.logs()) {
      streams++;
      events += heldEvents(log);
      evictions += log.ring.evicted;
      if (log.freeAt !== Number.POSITIVE_INFINITY) continue;
      if (log.limits.maxBytes > this.#limits.maxBytes) streamsSized++;
      largestStreamBound = Math.max(largestStreamBound, log.limits.maxBytes);
    }
    return {
      streams,
      events,
      bytes: this.#totalBytes,
      evictions,
      streamsEvicted: this.#streamsEvicted,
      streamsSized,
      largestStreamBound,
    };
  }

  /** Stops the sweep timer and frees everything. */
  close(): void {
    this.#logs.clear();
    this.#finished.clear();
    this.#totalBytes = 0;
    this.#last = undefined;
    this.#disarm();
  }

  /**
   * The run that keeps progress event `seq` (its frame `frame`): the tail when it continues it (the
   * event is already in it), else a new one; undefined when the frame is kept as text.
   */
  #progressRun(
    log: StreamLog,
    tail: string | PartialRun | ProgressRun | undefined,
    seq: number,
    e: ProgressEvent,
    frame: string,
    now: number,
  ): ProgressRun | undefined {
    // A run holds at most a quarter of the count bound (its events are seq - firstSeq so far): the
    // newest entry is never evicted, so a run as long as the bound would keep more than it allows,
    // and eviction drops a run whole.
    if (
      tail instanceof ProgressRun &&
      seq - tail.firstSeq < Math.max(1, log.limits.maxCount >> 2) &&
      tail.continues(seq, e, now)
    ) {
      tail.extend(seq, e, frame.length);
      return tail;
    }
    return ProgressRun.start(seq, e, frame, now);
  }

  #open(sessionId: string, streamId: number): StreamLog {
    let log = this.#logs.get(sessionId, streamId);
    if (log === undefined) {
      log = newStreamLog(sessionId, streamId, this.#ringLimits);
      if (this.#logs.add(sessionId, log)) this.#arm();
    }
    return log;
  }

  /**
   * Raises a stream's bounds to a disconnect's worth of its peak rate (in its own copy of the
   * limits, which its ring then reads). Never below the configured limits or above the per-stream share of the budget;
   * never lowered while the stream lives, so nothing it holds is evicted by a slower second.
   */
  #size(log: StreamLog): void {
    const base = this.#limits;
    const wantBytes = ((log.rate?.bytesPerSecond ?? 0) * base.tolerableDisconnectMs) / 1000;
    if (wantBytes <= log.limits.maxBytes || log.limits.maxBytes >= this.#maxStreamBytes) return;
    // Growth comes out of the store's headroom: live streams together stay within the budget.
    const headroom = Math.max(0, this.#maxTotalBytes - this.#totalBytes);
    const maxBytes = Math.min(Math.ceil(wantBytes), this.#maxStreamBytes, log.limits.maxBytes + headroom);
    if (maxBytes <= log.limits.maxBytes) return;
    if (log.limits === this.#ringLimits) {
      log.limits = { ...log.limits };
      log.ring.bound(log.limits);
    }
    log.limits.maxBytes = maxBytes;
    log.limits.maxCount = Math.max(
      log.limits.maxCount,
      Math.ceil((base.maxCount * maxBytes) / base.maxBytes),
    );
  }

  #expire(log: StreamLog, now: number): void {
    const before = heldBytes(log);
    if (expireAlone(log, now)) this.#evictedAlone++;
    log.ring.evictExpired(now);
    this.#totalBytes += heldBytes(log) - before;
  }

  /** Forgets a log's bytes and bookkeeping (the caller removes it from its session's map). */
  #release(log: StreamLog): void {
    this.#evictionsOfFreed += log.ring.evicted;
    this.#totalBytes -= heldBytes(log);
    this.#finished.delete(log);
    if (this.#last === log) this.#last = undefined;
  }

  /** Frees the oldest finished streams until the store is within its budget again. */
  #enforceBudget(): void {
    for (let log = this.#finished.oldestKey(); log !== undefined; log = this.#finished.oldestKey()) {
      if (this.#finished.size <= this.#maxFinished && this.#totalBytes <= this.#maxTotalBytes) return;
      this.#release(log);
      this.#logs.delete(log.sessionId, log.streamId);
      this.#streamsEvicted++;
    }
  }

  #arm(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.sweep(), this.#sweepMs);
    this.#timer.unref?.();
  }
  #disarm(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
