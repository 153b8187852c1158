/**
 * One stream's record in the memory store (memory-event-store.ts): its ring, its bounds, its
 * measured rate, and its priming event while that is all it holds.
 *
 * Most streams of an idle server hold one event: the standalone GET stream's priming event (an id
 * and empty data, 2025-11-25 basic/transports §"Resumability and Redelivery"). Kept beside the
 * ring, it leaves the ring without arrays (flow/ring-buffer.ts) and the stream without a rate
 * meter, about 280 bytes less per idle stream. The next event moves it into the ring first, where
 * it would have been; it is only kept beside when, in the ring, it would be neither evicted by
 * the byte bound nor raise the bounds by its rate. So what a replay returns and what the bounds
 * and `stats()` count are the same as if it had gone into the ring at once (a property test holds
 * the two against each other: test/unit/memory-event-store-priming.test.ts).
 */
import { flat } from '../flow/flat.js';
import { RateMeter } from '../flow/rate-meter.js';
import { RingBuffer, type RingLimits } from '../flow/ring-buffer.js';
import type { StoredEvent } from './event-store.js';
import type { PartialRun } from './partial-run.js';
import type { ProgressRun } from './progress-run.js';

/**
 * A priming event kept beside its stream's empty ring: its frame, seq and when it came. A class, not
 * an object literal: a literal's allocation site can be pretenured by V8, and one allocated old
 * would keep its young frame until a full collection (docs/benchmarks.md, "SSE answers and V8's
 * pretenuring"); every SSE answer makes one.
 */
class Primed {
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
  /** Made by the first event kept in the ring: a stream that only primed measures nothing. */
  rate: RateMeter | undefined;
  /** The priming event, while it is all the stream holds (see the file comment). */
  primed: Primed | undefined;
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
    primed: undefined,
    lastSeq: 0,
    freeAt: Number.POSITIVE_INFINITY,
  };
}

/** Bytes the stream holds, as the bounds and the store's budget count them. */
export function heldBytes(log: StreamLog): number {
  const p = log.primed;
  return p === undefined ? log.ring.bytes : log.ring.bytes + p.frame.length;
}

/** Entries the stream holds, as `stats().events` counts them. */
export function heldEvents(log: StreamLog): number {
  return log.primed === undefined ? log.ring.length : log.ring.length + 1;
}

/** How full the stream's buffer is, 0 to 1 (EventStore.fill). */
export function fillOf(log: StreamLog): number {
  const count = log.primed === undefined ? log.ring.count : log.ring.count + 1;
  return Math.max(heldBytes(log) / log.limits.maxBytes, count / log.limits.maxCount);
}

/** The seq of the first event still held (a run covers events from its first seq on). */
export function firstHeld(log: StreamLog): number | undefined {
  if (log.primed !== undefined) return log.primed.seq;
  const head = log.ring.head;
  return head === undefined || typeof head === 'string' ? log.ring.firstSeq : head.firstSeq;
}

/**
 * Whether a priming event of `bytes` may wait beside the ring: the stream's first event (no rate
 * meter yet), which in the ring would be neither evicted by the byte bound nor raise the bounds by
 * its rate (`tolerableMs` of it; memory-event-store.ts `#size` makes the same comparison).
 */
export function keepsBeside(log: StreamLog, bytes: number, tolerableMs: number): boolean {
  const l = log.limits;
  return (
    log.rate === undefined &&
    log.primed === undefined &&
    l.maxCount >= 1 &&
    bytes <= l.maxBytes &&
    (bytes * tolerableMs) / 1000 <= l.maxBytes
  );
}

/** Keeps the stream's first event, its priming one, beside its empty ring. */
export function prime(log: StreamLog, event: StoredEvent, now: number): void {
  log.primed = new Primed(event.seq, flat(event.frame), now);
}

/** Another event came: the priming event goes into the ring first, measured as it would have been. */
export function unprime(log: StreamLog): void {
  const p = log.primed;
  if (p === undefined) return;
  log.primed = undefined;
  log.rate = new RateMeter();
  log.rate.note(p.frame.length, p.at);
  log.ring.push(p.seq, p.frame, p.frame.length, p.at);
}

/** Drops a priming event kept beside the ring once past the age bound, as the ring would (true then). */
export function expirePrimed(log: StreamLog, now: number): boolean {
  const p = log.primed;
  if (p === undefined || p.at >= now - log.limits.maxAgeMs) return false;
  log.primed = undefined;
  return true;
}
