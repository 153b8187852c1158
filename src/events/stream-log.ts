/**
 * One stream's record in the memory store (memory-event-store.ts): its ring, its bounds, its
 * measured rate, and its first event while that is all it holds.
 *
 * Most streams of an idle server hold one event: the standalone GET stream's priming event (an id
 * and empty data, 2025-11-25 basic/transports §"Resumability and Redelivery"). A stream's first
 * event, when it is a plain frame, is held alone beside the ring: the ring then allocates no
 * arrays (flow/ring-buffer.ts) and the stream has no rate meter, about 280 bytes less per idle
 * stream. The next event moves it into the ring first, where it would have been, and it is only
 * held alone when, in the ring, it would be neither evicted by the byte bound nor raise the bounds
 * by its rate. So what a replay returns and what the bounds and `stats()` count are the same as if
 * it had gone into the ring at once (a property test holds the two against each other:
 * test/unit/memory-event-store-alone.test.ts).
 */
import { flat } from '../flow/flat.js';
import { RATE_WINDOW_MS, RateMeter } from '../flow/rate-meter.js';
import { RingBuffer, type RingLimits } from '../flow/ring-buffer.js';
import type { StoredEvent } from './event-store.js';
import type { PartialRun } from './partial-run.js';
import type { ProgressRun } from './progress-run.js';

/**
 * A stream's first event, held alone beside its empty ring: its frame, seq and when it came. A
 * class, not an object literal: a literal's allocation site can be pretenured by V8, and one
 * allocated old would keep its young frame until a full collection (docs/benchmarks.md, "SSE
 * answers and V8's pretenuring"); every SSE answer makes one.
 */
class Alone {
  readonly seq: number;
  readonly frame: string;
  readonly at: number;
  constructor(seq: number, frame: string, at: number) {
    this.seq = seq;
    this.frame = frame;
    this.at = at;
  }
}

export interface StreamLog {
  readonly sessionId: string;
  readonly streamId: number;
  readonly ring: RingBuffer<string | PartialRun | ProgressRun>;
  /**
   * This stream's bounds: the configured ones (one object shared by every stream) until its measured
   * rate raises them (then its own copy; memory-event-store.ts).
   */
  limits: RingLimits;
  /** Made by the first event kept in the ring: a stream whose one event is held alone measures nothing. */
  rate: RateMeter | undefined;
  /** The stream's first event, while it is all the stream holds (see the file comment). */
  alone: Alone | undefined;
  /** Highest seq ever appended (survives eviction, so a future cursor is recognisable). */
  lastSeq: number;
  /** When a finished stream may be freed. */
  freeAt: number;
}

export function newStreamLog(sessionId: string, streamId: number, limits: RingLimits): StreamLog {
  return {
    sessionId,
    streamId,
    ring: new RingBuffer<string | PartialRun | ProgressRun>(limits),
    limits,
    rate: undefined,
    alone: undefined,
    lastSeq: 0,
    freeAt: Number.POSITIVE_INFINITY,
  };
}

/** Bytes the stream holds, as the bounds and the store's budget count them. */
export function heldBytes(log: StreamLog): number {
  const p = log.alone;
  return p === undefined ? log.ring.bytes : log.ring.bytes + p.frame.length;
}

/** Entries the stream holds, as `stats().events` counts them. */
export function heldEvents(log: StreamLog): number {
  return log.alone === undefined ? log.ring.length : log.ring.length + 1;
}

/** How full the stream's buffer is, 0 to 1 (EventStore.fill). */
export function fillOf(log: StreamLog): number {
  const count = log.alone === undefined ? log.ring.count : log.ring.count + 1;
  return Math.max(heldBytes(log) / log.limits.maxBytes, count / log.limits.maxCount);
}

/** The seq of the first event still held (a run covers events from its first seq on). */
export function firstHeld(log: StreamLog): number | undefined {
  if (log.alone !== undefined) return log.alone.seq;
  const head = log.ring.head;
  return head === undefined || typeof head === 'string' ? log.ring.firstSeq : head.firstSeq;
}

/**
 * Whether `event` may be held alone beside the ring: the stream's first event (no rate meter yet),
 * a plain frame (partial output and progress go into runs in the ring), which in the ring would
 * be neither evicted by the byte bound nor raise the bounds by its rate (`tolerableMs` of it;
 * memory-event-store.ts `#size` makes the same comparison).
 */
export function holdsAlone(log: StreamLog, event: StoredEvent, tolerableMs: number): boolean {
  const l = log.limits;
  const bytes = event.frame.length;
  return (
    log.rate === undefined &&
    log.alone === undefined &&
    event.partial === undefined &&
    event.progress === undefined &&
    l.maxCount >= 1 &&
    bytes <= l.maxBytes &&
    (bytes * tolerableMs) / 1000 <= l.maxBytes
  );
}

/** Holds the stream's first event alone beside its empty ring. */
export function holdAlone(log: StreamLog, event: StoredEvent, now: number): void {
  log.alone = new Alone(event.seq, flat(event.frame), now);
}

/** Another event came: the one held alone goes into the ring first, measured as it would have been. */
export function intoRing(log: StreamLog): void {
  const a = log.alone;
  if (a === undefined) return;
  log.alone = undefined;
  log.rate = new RateMeter();
  log.rate.note(a.frame.length, a.at);
  log.ring.push(a.seq, a.frame, a.frame.length, a.at);
}

/**
 * Drops the event held alone once past the age bound, as the ring would (true then). In the ring it
 * would have been measured on the way in, and a meter's window outlives an age bound under a
 * second: while a later event can still fall into the window it opened, the stream gets the meter
 * the ring would have had, or that event's bounds would be sized by a lower rate. Past the window
 * the event alone cannot raise the bounds (`holdsAlone`), so no meter is made for it then: a
 * stream whose priming event aged out (5 minutes by default) stays without one.
 */
export function expireAlone(log: StreamLog, now: number): boolean {
  const a = log.alone;
  if (a === undefined || a.at >= now - log.limits.maxAgeMs) return false;
  log.alone = undefined;
  if (now - a.at < RATE_WINDOW_MS) {
    log.rate = new RateMeter();
    log.rate.note(a.frame.length, a.at);
  }
  return true;
}
