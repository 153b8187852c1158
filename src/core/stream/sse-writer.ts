/**
 * Writes SSE frames of one connection to its sink with batching and backpressure.
 *
 * - The first frame of a tick is written at once (time to first event is one syscall away); frames
 *   that follow in the same tick are collected and written as one chunk at runSoon (setImmediate) or
 *   when the batch reaches BATCH_BYTES (through the sink's writeMany when it has one). A producer that never leaves the microtask queue (awaiting already-resolved sends)
 *   therefore still gets its frames onto the wire in large writes instead of one at the end.
 * - When the sink refuses (write() returned false) frames go to a bounded OutboundQueue, where
 *   progress frames coalesce per token, until 'drain'. Time spent waiting is counted as write stall.
 * - Partial output merges (never drops) in the queue; its producer waits above the high-water mark
 *   like any non-coalescible one, so a flooding tool runs at the reader's pace.
 * - Right after open(), the opening bytes wait for the tick's batch; the first progress or partial
 *   frame flushes them at once instead, so a tool that floods without yielding does not hold its
 *   first frame until the batch fills.
 * - A frame that cannot be coalesced and would overflow maxQueueBytes ends the connection
 *   ('overflow'): the caller keeps it in the replay buffer and the client resumes from there.
 */
import { OutboundQueue } from '../../flow/outbound-queue.js';
import type { PartialFrame } from '../../flow/partial-frame.js';
import { KEEPALIVE_COMMENT } from '../../sse/encode.js';
import type { Counters } from '../observe/counters.js';
import type { ResponseSink } from '../pipeline/sink.js';
import { runSoonFor } from './schedule.js';

/** Frames joined in one tick are written once they reach this size. */
const BATCH_BYTES = 64 * 1024;
/** Batches shorter than this go to the sink as one string (one write of a short string is cheaper). */
const MANY_MIN = 4096;

/** Frames as one string (the one frame itself when there is one). */
function joined(frames: readonly string[]): string {
  return frames.length === 1 ? (frames[0] as string) : frames.join('');
}

export type WriteOutcome = 'written' | 'queued' | 'overflow' | 'closed';

export interface WriterLimits {
  /** Queue bytes above which a non-coalescible send waits for room. */
  highWaterMark: number;
  /** Queue bytes that a non-coalescible frame may not exceed: the connection is closed instead. */
  maxQueueBytes: number;
}

export class SseWriter {
  readonly #sink: ResponseSink;
  readonly #limits: WriterLimits;
  readonly #counters: Counters;
  readonly #now: () => number;
  /** Created on the first refusal: most connections never block, and SSE answers are per request. */
  #q: OutboundQueue | undefined;
  /**
   * This tick's batch: its frames, joined only when written (a sink with `writeMany` encodes them
   * one by one into one buffer instead: no 64 KiB string built of some 3,000 pieces to flatten, see
   * pipeline/sink.ts). Undefined while empty: an idle connection holds no array.
   */
  #frames: string[] | undefined;
  /** UTF-16 code units in #frames. */
  #chars = 0;
  #batchOpen = false;
  /** The batch holds only what open() put there. */
  #opening = false;
  /** Waiters (whenFlushed, waitForRoom), made on first use: most connections never wait. */
  #flushWaiters: (() => void)[] | undefined;
  #writable = true;
  /** Whether the drain listener is on the sink (from the first refused write on). */
  #drainHooked = false;
  #stallStart = 0;
  #waiters: (() => void)[] | undefined;
  /** Called once, when the response's first bytes go to the sink (time to first byte). */
  #firstBytes: (() => void) | undefined;
  #lastWriteAt: number;
  #stallMs = 0;
  #closed = false;

  /** When the last bytes went to the sink (for keepalive). */
  get lastWriteAt(): number {
    return this.#lastWriteAt;
  }

  /** Milliseconds this connection spent waiting for 'drain'. */
  get stallMs(): number {
    return this.#stallMs;
  }

  constructor(sink: ResponseSink, limits: WriterLimits, counters: Counters, now: () => number) {
    this.#sink = sink;
    this.#limits = limits;
    this.#counters = counters;
    this.#now = now;
    this.#lastWriteAt = now();
  }

  get closed(): boolean {
    return this.#closed;
  }
  get queuedBytes(): number {
    return (this.#q?.bytes ?? 0) + this.#chars;
  }
  get queuedMessages(): number {
    return this.#q?.count ?? 0;
  }
  get coalesced(): number {
    return this.#q?.coalesced ?? 0;
  }
  get merged(): number {
    return this.#q?.merged ?? 0;
  }
  /** The socket refused bytes and has not drained yet. */
  get blocked(): boolean {
    return !this.#writable;
  }
  /** Whether a non-coalescible producer should wait (see waitForRoom). */
  get congested(): boolean {
    return !this.#writable && (this.#q?.bytes ?? 0) > this.#limits.highWaterMark;
  }

  /**
   * Starts the response. Headers and first bytes join this tick's batch, so they leave together
   * with whatever else the tick produces (for a quick answer: headers, priming event, response
   * and the final chunk in one write) and no later than runSoon (setImmediate).
   */
  open(status: number, headers: Record<string, string>, first: string): void {
    this.#sink.head(status, headers);
    this.#lastWriteAt = this.#now();
    this.#frames = first.length === 0 ? undefined : [first];
    this.#chars = first.length;
    this.#opening = true;
    if (!this.#batchOpen) {
      this.#batchOpen = true;
      runSoonFor(SseWriter.#endBatch, this);
    }
  }

  /**
   * Writes one frame; `key` makes it coalescible with queued frames of the same key. An `urgent`
   * frame (a notification: progress, partial output) right after open() flushes the opening bytes
   * with it at once instead of waiting for the tick's batch.
   */
  write(frame: string, key?: string, urgent = key !== undefined): WriteOutcome {
    if (this.#closed) return 'closed';
    if (!this.#writable) {
      const q = this.#queue();
      if (key === undefined && q.bytes + frame.length > this.#limits.maxQueueBytes) {
        return 'overflow';
      }
      const before = q.coalesced;
      q.push(frame, key);
      this.#counters.add('coalesced', q.coalesced - before);
      return 'queued';
    }
    this.#append(frame, urgent);
    return 'written';
  }

  /**
   * Writes one delta of partial output: at once (as `frame`, rendered by the caller when it had to
   * render it anyway) when the socket takes bytes, else merged into the queue. Never dropped.
   */
  writePartial(p: PartialFrame, frame: string | undefined): WriteOutcome {
    if (this.#closed) return 'closed';
    if (!this.#writable) {
      const q = this.#queue();
      if (q.bytes + p.escaped.length > this.#limits.maxQueueBytes) return 'overflow';
      const before = q.merged;
      q.pushPartial(p);
      this.#counters.add('partialMerged', q.merged - before);
      return 'queued';
    }
    this.#append(frame ?? p.render(), true);
    return 'written';
  }

  /**
   * Resolves once everything written so far has been handed to the sink and the sink has taken it
   * (not blocked); undefined when that is already so. Used to keep a json answer behind the related
   * notifications sent on another connection.
   */
  whenFlushed(): Promise<void> | undefined {
    if (this.#closed || this.#isFlushed()) return undefined;
    this.#flushWaiters ??= [];
    const waiters = this.#flushWaiters;
    return new Promise((resolve) => waiters.push(resolve));
  }

  #isFlushed(): boolean {
    return this.#writable && this.#chars === 0 && (this.#q?.count ?? 0) === 0;
  }

  #append(frame: string, urgent: boolean): void {
    if (!this.#batchOpen) {
      this.#batchOpen = true;
      runSoonFor(SseWriter.#endBatch, this);
      this.#put(frame);
      return;
    }
    if (this.#frames === undefined) this.#frames = [frame];
    else this.#frames.push(frame);
    this.#chars += frame.length;
    if (this.#chars >= BATCH_BYTES || (urgent && this.#opening)) this.#flushBatch();
  }

  /** Resolves when the queue is back under the high-water mark (or the connection is gone). */
  waitForRoom(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#waiters ??= [];
    const waiters = this.#waiters;
    return new Promise((resolve) => waiters.push(resolve));
  }

  /** Sends a comment if nothing was written for idleMs; true when it did. */
  keepalive(now: number, idleMs: number): boolean {
    if (this.#closed || !this.#writable || this.#batchOpen || now - this.#lastWriteAt < idleMs) return false;
    this.#put(KEEPALIVE_COMMENT);
    return true;
  }

  /** Calls `f` once when the response's first bytes go to the sink (never if it closes first). */
  onFirstBytes(f: () => void): void {
    this.#firstBytes = f;
  }

  /** Flushes everything and finishes the response. */
  end(): void {
    if (this.#closed) return;
    // What is queued was refused by the socket earlier and goes first; the open batch follows.
    const rest = (this.#q?.drain() ?? '') + this.#takeBatch();
    this.#firstSent();
    this.#closed = true;
    this.#sink.end(rest);
    this.#release();
  }

  /** Drops the connection without flushing (overflow, shutdown deadline). */
  destroy(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#sink.destroy();
    this.#release();
  }

  #queue(): OutboundQueue {
    this.#q ??= new OutboundQueue();
    return this.#q;
  }

  /** The end of a tick's batch; static, so that a writer keeps no closure for it. */
  static #endBatch(w: SseWriter): void {
    w.#batchOpen = false;
    w.#flushBatch();
  }

  #flushBatch(): void {
    this.#opening = false;
    const frames = this.#frames;
    const chars = this.#chars;
    if (frames === undefined || chars === 0) return;
    this.#frames = undefined;
    this.#chars = 0;
    if (!this.#writable) this.#queue().push(joined(frames));
    else if (frames.length > 1 && chars >= MANY_MIN) this.#putMany(frames, chars);
    else this.#put(joined(frames));
    if (this.#flushWaiters !== undefined && this.#isFlushed()) this.#releaseFlushed();
  }

  #releaseFlushed(): void {
    const waiters = this.#flushWaiters;
    if (waiters === undefined) return;
    this.#flushWaiters = undefined;
    for (const w of waiters) w();
  }

  #firstSent(): void {
    const f = this.#firstBytes;
    if (f === undefined) return;
    this.#firstBytes = undefined;
    f();
  }

  /** The batch as one string, emptied. */
  #takeBatch(): string {
    const frames = this.#frames;
    this.#frames = undefined;
    this.#chars = 0;
    return frames === undefined ? '' : joined(frames);
  }

  #put(chunk: string): void {
    if (this.#firstBytes !== undefined) this.#firstSent();
    this.#lastWriteAt = this.#now();
    this.#wrote(this.#sink.write(chunk));
  }

  /** A batch of frames as one write: through the sink's `writeMany`, or joined for a sink without it. */
  #putMany(frames: readonly string[], chars: number): void {
    if (this.#firstBytes !== undefined) this.#firstSent();
    this.#lastWriteAt = this.#now();
    const sink = this.#sink;
    this.#wrote(sink.writeMany?.(frames, chars) ?? sink.write(frames.join('')));
  }

  /** After a write: on a refusal, stop writing until 'drain'. */
  #wrote(ok: boolean): void {
    if (!ok && this.#writable) {
      this.#writable = false;
      this.#stallStart = this.#lastWriteAt;
      // The drain listener goes on at the first refusal (drain only follows a refused write, never
      // within it): most connections never block, and an idle stream keeps no listener for it.
      if (!this.#drainHooked) {
        this.#drainHooked = true;
        this.#sink.onDrain(() => this.#onDrain());
      }
    }
  }

  #onDrain(): void {
    if (this.#closed || this.#writable) return;
    const now = this.#now();
    this.#stallMs += now - this.#stallStart;
    this.#counters.add('writeStallMs', now - this.#stallStart);
    this.#counters.add('writeStalls');
    this.#counters.metrics?.writeStall.observe((now - this.#stallStart) / 1000);
    this.#writable = true;
    const rest = this.#q?.drain() ?? '';
    if (rest.length > 0) this.#put(rest);
    // The queue is empty now (its bytes are in the socket's buffer): waiting producers may go on.
    this.#release();
    if (this.#flushWaiters !== undefined && this.#isFlushed()) this.#releaseFlushed();
  }

  /**
   * The sink closed (the peer went, or the response finished). Called by the connection that owns
   * this writer from its own close listener: one closure on the sink for both, not one each.
   */
  sinkClosed(): void {
    if (!this.#closed) {
      this.#closed = true;
      this.#release();
    }
  }

  #release(): void {
    if (this.#closed) this.#releaseFlushed();
    const waiters = this.#waiters;
    if (waiters === undefined) return;
    this.#waiters = undefined;
    for (const w of waiters) w();
  }
}
