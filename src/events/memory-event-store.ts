/**
 * The default EventStore: one RingBuffer per (session, stream), bounded by count, bytes and age.
 *
 * Sizing of the defaults: the ring's depth is the longest disconnect a client can recover from.
 * A busy tool emits on the order of 20 events/s after progress coalescing; a proxy reconnect plus
 * the client's `retry` and backoff takes seconds, and 30 s is a generous outage. 20/s x 30 s = 600,
 * rounded up to 1024 events. Bytes cap at 1 MiB per stream (so 4 KiB events keep ~256 of them) and
 * age at 5 minutes, the same as the orphan timeout: after that nobody will resume anyway.
 * A finished stream is kept for a grace period (60 s by default, set by the caller) so a client can
 * still resume it and collect its result.
 */
import { RingBuffer, type RingLimits } from '../flow/ring-buffer.js';
import type { EventStore, ReplayResult, StoredEvent } from './event-store.js';

export const DEFAULT_REPLAY_LIMITS: RingLimits = {
  maxCount: 1024,
  maxBytes: 1024 * 1024,
  maxAgeMs: 5 * 60_000,
};

interface StreamLog {
  ring: RingBuffer<string>;
  /** Highest seq ever appended (survives eviction, so a future cursor is recognisable). */
  lastSeq: number;
  /** When a finished stream may be freed. */
  freeAt: number;
}

export interface MemoryEventStoreOptions {
  limits?: Partial<RingLimits>;
  now?: () => number;
  /** How often expired entries and finished streams are swept. @defaultValue 10_000 ms */
  sweepMs?: number;
}

export interface EventStoreStats {
  streams: number;
  events: number;
  bytes: number;
  evictions: number;
}

export class MemoryEventStore implements EventStore {
  readonly #sessions = new Map<string, Map<number, StreamLog>>();
  readonly #limits: RingLimits;
  readonly #now: () => number;
  readonly #sweepMs: number;
  #timer: ReturnType<typeof setInterval> | undefined;
  #evictionsOfFreed = 0;
  #last: { sessionId: string; streamId: number; log: StreamLog } | undefined;

  constructor(options: MemoryEventStoreOptions = {}) {
    this.#limits = { ...DEFAULT_REPLAY_LIMITS, ...options.limits };
    this.#now = options.now ?? Date.now;
    this.#sweepMs = options.sweepMs ?? 10_000;
  }

  append(sessionId: string, streamId: number, event: StoredEvent): void {
    // Events come in runs on one stream: a one-entry cache saves two map lookups per event.
    const cached = this.#last;
    if (cached !== undefined && cached.sessionId === sessionId && cached.streamId === streamId) {
      cached.log.ring.push(event.seq, event.frame, event.frame.length, this.#now());
      if (event.seq > cached.log.lastSeq) cached.log.lastSeq = event.seq;
      return;
    }
    let streams = this.#sessions.get(sessionId);
    if (streams === undefined) {
      streams = new Map();
      this.#sessions.set(sessionId, streams);
      this.#arm();
    }
    let log = streams.get(streamId);
    if (log === undefined) {
      log = { ring: new RingBuffer<string>(this.#limits), lastSeq: 0, freeAt: Number.POSITIVE_INFINITY };
      streams.set(streamId, log);
    }
    // Frames are ASCII-dominated; string length is a close, allocation-free proxy for bytes.
    log.ring.push(event.seq, event.frame, event.frame.length, this.#now());
    if (event.seq > log.lastSeq) log.lastSeq = event.seq;
    this.#last = { sessionId, streamId, log };
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
    log.ring.evictExpired(now);
    const first = log.ring.firstSeq;
    // Entries seq <= afterSeq were delivered; a gap exists if the first retained one is beyond afterSeq+1.
    const gap = first === undefined ? afterSeq < log.lastSeq : first > afterSeq + 1;
    if (gap && options?.allowGap !== true) return { status: 'evicted' };
    return { status: 'ok', events: log.ring.after(afterSeq).map((e) => ({ seq: e.seq, frame: e.value })) };
  }

  endStream(sessionId: string, streamId: number, graceMs: number): void {
    const log = this.#sessions.get(sessionId)?.get(streamId);
    if (log !== undefined) log.freeAt = this.#now() + graceMs;
  }

  dropSession(sessionId: string): void {
    const streams = this.#sessions.get(sessionId);
    if (streams === undefined) return;
    for (const log of streams.values()) this.#evictionsOfFreed += log.ring.evicted;
    this.#sessions.delete(sessionId);
    this.#last = undefined;
    if (this.#sessions.size === 0) this.#disarm();
  }

  /** Frees finished streams past their grace and entries past their age. Runs on a timer too. */
  sweep(): void {
    const now = this.#now();
    for (const [sessionId, streams] of this.#sessions) {
      for (const [streamId, log] of streams) {
        log.ring.evictExpired(now);
        if (log.freeAt <= now) {
          this.#evictionsOfFreed += log.ring.evicted;
          streams.delete(streamId);
          if (this.#last?.log === log) this.#last = undefined;
        }
      }
      if (streams.size === 0) this.#sessions.delete(sessionId);
    }
    if (this.#sessions.size === 0) this.#disarm();
  }

  stats(): EventStoreStats {
    let streams = 0;
    let events = 0;
    let bytes = 0;
    let evictions = this.#evictionsOfFreed;
    for (const s of this.#sessions.values()) {
      for (const log of s.values()) {
        streams++;
        events += log.ring.length;
        bytes += log.ring.bytes;
        evictions += log.ring.evicted;
      }
    }
    return { streams, events, bytes, evictions };
  }

  /** Stops the sweep timer and frees everything. */
  close(): void {
    this.#sessions.clear();
    this.#last = undefined;
    this.#disarm();
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
