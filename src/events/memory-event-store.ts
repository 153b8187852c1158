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
 */
import { RingBuffer, type RingLimits } from '../flow/ring-buffer.js';
import type { EventStore, ReplayResult, StoredEvent } from './event-store.js';

export const DEFAULT_REPLAY_LIMITS: RingLimits = {
  maxCount: 1024,
  maxBytes: 1024 * 1024,
  maxAgeMs: 5 * 60_000,
};

/** The store-wide budget's defaults (see the file comment); `replayBudget` in the server options. */
export const DEFAULT_REPLAY_BUDGET = {
  maxTotalBytes: 64 * 1024 * 1024,
  maxFinishedStreams: 10_000,
} as const;

interface StreamLog {
  readonly sessionId: string;
  readonly streamId: number;
  readonly ring: RingBuffer<string>;
  /** Highest seq ever appended (survives eviction, so a future cursor is recognisable). */
  lastSeq: number;
  /** When a finished stream may be freed. */
  freeAt: number;
}

export interface MemoryEventStoreOptions {
  limits?: Partial<RingLimits>;
  /** Bytes held by the whole store before finished streams are freed early. @defaultValue 64 MiB */
  maxTotalBytes?: number;
  /** Finished streams kept for resumption before the oldest are freed early. @defaultValue 10000 */
  maxFinishedStreams?: number;
  now?: () => number;
  /** How often expired entries and finished streams are swept. @defaultValue 10_000 ms */
  sweepMs?: number;
}

export interface EventStoreStats {
  streams: number;
  events: number;
  bytes: number;
  /** Events dropped by the per-stream bounds. */
  evictions: number;
  /** Finished streams freed before their grace ended, to respect the store-wide budget. */
  streamsEvicted: number;
}

export class MemoryEventStore implements EventStore {
  readonly #sessions = new Map<string, Map<number, StreamLog>>();
  /** Finished streams, oldest first (insertion order). */
  readonly #finished = new Set<StreamLog>();
  readonly #limits: RingLimits;
  readonly #maxTotalBytes: number;
  readonly #maxFinished: number;
  readonly #now: () => number;
  readonly #sweepMs: number;
  #timer: ReturnType<typeof setInterval> | undefined;
  #totalBytes = 0;
  #evictionsOfFreed = 0;
  #streamsEvicted = 0;
  #last: StreamLog | undefined;

  constructor(options: MemoryEventStoreOptions = {}) {
    this.#limits = { ...DEFAULT_REPLAY_LIMITS, ...options.limits };
    this.#maxTotalBytes = options.maxTotalBytes ?? DEFAULT_REPLAY_BUDGET.maxTotalBytes;
    this.#maxFinished = options.maxFinishedStreams ?? DEFAULT_REPLAY_BUDGET.maxFinishedStreams;
    this.#now = options.now ?? Date.now;
    this.#sweepMs = options.sweepMs ?? 10_000;
  }

  append(sessionId: string, streamId: number, event: StoredEvent): void {
    // Events come in runs on one stream: a one-entry cache saves two map lookups per event.
    let log = this.#last;
    if (log === undefined || log.sessionId !== sessionId || log.streamId !== streamId) {
      log = this.#open(sessionId, streamId);
      this.#last = log;
    }
    const before = log.ring.bytes;
    // Frames are ASCII-dominated; string length is a close, allocation-free proxy for bytes.
    log.ring.push(event.seq, event.frame, event.frame.length, this.#now());
    this.#totalBytes += log.ring.bytes - before;
    if (event.seq > log.lastSeq) log.lastSeq = event.seq;
    if (this.#totalBytes > this.#maxTotalBytes) this.#enforceBudget();
  }

  replay(
    sessionId: string,
    streamId: number,
    afterSeq: number,
    options?: { allowGap?: boolean },
  ): ReplayResult {
    const log = this.#sessions.get(sessionId)?.get(streamId);
    const now = this.#now();
    // A finished stream past its grace period is gone, whether or not the sweep has run yet.
    if (log === undefined || log.freeAt <= now || afterSeq > log.lastSeq) return { status: 'unknown' };
    this.#expire(log, now);
    const first = log.ring.firstSeq;
    // Entries seq <= afterSeq were delivered; a gap exists if the first retained one is beyond afterSeq+1.
    const gap = first === undefined ? afterSeq < log.lastSeq : first > afterSeq + 1;
    if (gap && options?.allowGap !== true) return { status: 'evicted' };
    return { status: 'ok', events: log.ring.after(afterSeq).map((e) => ({ seq: e.seq, frame: e.value })) };
  }

  endStream(sessionId: string, streamId: number, graceMs: number): void {
    const log = this.#sessions.get(sessionId)?.get(streamId);
    if (log === undefined) return;
    log.freeAt = this.#now() + graceMs;
    this.#finished.add(log);
    if (this.#finished.size > this.#maxFinished) this.#enforceBudget();
  }

  dropSession(sessionId: string): void {
    const streams = this.#sessions.get(sessionId);
    if (streams === undefined) return;
    for (const log of streams.values()) this.#release(log);
    this.#sessions.delete(sessionId);
    if (this.#sessions.size === 0) this.#disarm();
  }

  /** Frees finished streams past their grace and entries past their age. Runs on a timer too. */
  sweep(): void {
    const now = this.#now();
    for (const [sessionId, streams] of this.#sessions) {
      for (const [streamId, log] of streams) {
        this.#expire(log, now);
        if (log.freeAt <= now) {
          this.#release(log);
          streams.delete(streamId);
        }
      }
      if (streams.size === 0) this.#sessions.delete(sessionId);
    }
    if (this.#sessions.size === 0) this.#disarm();
  }

  stats(): EventStoreStats {
    let streams = 0;
    let events = 0;
    let evictions = this.#evictionsOfFreed;
    for (const s of this.#sessions.values()) {
      for (const log of s.values()) {
        streams++;
        events += log.ring.length;
        evictions += log.ring.evicted;
      }
    }
    return { streams, events, bytes: this.#totalBytes, evictions, streamsEvicted: this.#streamsEvicted };
  }

  /** Stops the sweep timer and frees everything. */
  close(): void {
    this.#sessions.clear();
    this.#finished.clear();
    this.#totalBytes = 0;
    this.#last = undefined;
    this.#disarm();
  }

  #open(sessionId: string, streamId: number): StreamLog {
    let streams = this.#sessions.get(sessionId);
    if (streams === undefined) {
      streams = new Map();
      this.#sessions.set(sessionId, streams);
      this.#arm();
    }
    let log = streams.get(streamId);
    if (log === undefined) {
      log = {
        sessionId,
        streamId,
        ring: new RingBuffer<string>(this.#limits),
        lastSeq: 0,
        freeAt: Number.POSITIVE_INFINITY,
      };
      streams.set(streamId, log);
    }
    return log;
  }

  #expire(log: StreamLog, now: number): void {
    const before = log.ring.bytes;
    log.ring.evictExpired(now);
    this.#totalBytes += log.ring.bytes - before;
  }

  /** Forgets a log's bytes and bookkeeping (the caller removes it from its session's map). */
  #release(log: StreamLog): void {
    this.#evictionsOfFreed += log.ring.evicted;
    this.#totalBytes -= log.ring.bytes;
    this.#finished.delete(log);
    if (this.#last === log) this.#last = undefined;
  }

  /** Frees the oldest finished streams until the store is within its budget again. */
  #enforceBudget(): void {
    for (const log of this.#finished) {
      if (this.#finished.size <= this.#maxFinished && this.#totalBytes <= this.#maxTotalBytes) return;
      this.#release(log);
      this.#sessions.get(log.sessionId)?.delete(log.streamId);
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
