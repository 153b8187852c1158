/**
 * One SSE connection of an answer: the writer on one HTTP response, its membership of the
 * endpoint's live set (the shared keepalive timer and the queue stats walk that set), and the one
 * place where a blocked socket is decided, by the answer's overflow policy:
 * - 'close-and-resume' (2025 sessions): a frame that cannot be queued drops the connection; the
 *   frame is already in the replay store and the client resumes from its last event id
 *   (2025-11-25 basic/transports §"Resumability and Redelivery"); nothing is ever dropped.
 * - 'wait-for-room' (2026-07-28 requests and listen streams): there is no replay and closing the
 *   response is cancellation (2026-07-28 basic/transports §"Cancellation"), so the producer waits
 *   until the queue drains below the high-water mark and writes again.
 * A connection joins the live set when it opens and leaves it however it goes (end, destroy, the
 * peer closing): nothing else in the core adds to or deletes from that set.
 */
import type { PartialFrame } from '../../flow/partial-frame.js';
import type { Counters } from '../observe/counters.js';
import type { ResumePoint } from '../observe/probe.js';
import type { Headers, ResponseSink } from '../pipeline/sink.js';
import type { WriterSet } from '../stream/live.js';
import { SseWriter, type WriteOutcome, type WriterLimits } from '../stream/sse-writer.js';

export type OverflowPolicy = 'close-and-resume' | 'wait-for-room';

/** What every connection of an endpoint shares. */
export interface ConnectionShared {
  readonly counters: Counters;
  readonly limits: WriterLimits;
  readonly now: () => number;
  /** Every open SSE connection's writer (stream/live.ts). */
  readonly live: WriterSet;
}

/**
 * Told what becomes of a connection: a session's EventStream, which outlives its connections. An
 * object handed over once rather than callbacks, so an idle stream's connection holds no closures.
 */
export interface ConnectionOwner {
  /** 'close-and-resume': an overflow is about to drop this connection. */
  connectionOverflowed(c: SseConnection): void;
  /** The connection is gone (the writer already knows, and it left the live set). */
  connectionClosed(c: SseConnection): void;
}

export class SseConnection {
  readonly writer: SseWriter;
  /** Where this connection resumed from; undefined for a connection that started the stream. */
  readonly resumed: ResumePoint | undefined;
  readonly #live: WriterSet;
  readonly #counters: Counters;
  readonly #policy: OverflowPolicy;
  readonly #owner: ConnectionOwner | undefined;

  constructor(
    sink: ResponseSink,
    shared: ConnectionShared,
    policy: OverflowPolicy,
    owner?: ConnectionOwner | undefined,
    resumed?: ResumePoint | undefined,
  ) {
    this.writer = new SseWriter(sink, shared.limits, shared.counters, shared.now);
    this.resumed = resumed;
    this.#live = shared.live;
    this.#counters = shared.counters;
    this.#policy = policy;
    this.#owner = owner;
    // The writer learns of the close first, then the live set, then the owner: one listener.
    sink.onClose(() => {
      this.writer.sinkClosed();
      this.#leave();
      this.#owner?.connectionClosed(this);
    });
  }

  get policy(): OverflowPolicy {
    return this.#policy;
  }
  get closed(): boolean {
    return this.writer.closed;
  }

  /** Sends the status, headers and first bytes, and joins the live set. */
  open(status: number, headers: Headers, first: string): void {
    if (!this.writer.closed) this.#live.add(this.writer);
    this.writer.open(status, headers, first);
  }

  /**
   * Writes one frame now. Under 'close-and-resume' an overflow drops the connection (counted) and
   * returns 'overflow'; under 'wait-for-room' 'overflow' means "not written": use send().
   */
  write(frame: string, key?: string, urgent?: boolean): WriteOutcome {
    const out = this.writer.write(frame, key, urgent ?? key !== undefined);
    return out === 'overflow' ? this.#overflowed() : out;
  }

  /** One delta of partial output (merged when the socket is blocked); overflow as in write(). */
  writePartial(p: PartialFrame, frame: string | undefined): WriteOutcome {
    const out = this.writer.writePartial(p, frame);
    return out === 'overflow' ? this.#overflowed() : out;
  }

  /**
   * Writes one frame for a producer that may be slowed ('wait-for-room'): a frame that does not fit
   * waits for room and is written then; a non-coalescible frame above the high-water mark makes the
   * producer wait. Resolves at once (undefined) when it may go on. `live` says whether the frame is
   * still wanted once there is room (its request may have ended meanwhile).
   */
  send(frame: string, key?: string, live?: () => boolean): Promise<void> | undefined {
    const out = this.write(frame, key);
    if (out === 'overflow') {
      return this.writer
        .waitForRoom()
        .then(() => (this.writer.closed || live?.() === false ? undefined : this.send(frame, key, live)));
    }
    if (out !== 'closed') this.#counters.add('eventsWritten');
    if (key === undefined && this.writer.congested) return this.writer.waitForRoom();
    return undefined;
  }

  /** The last frame, then the end of the response; waits for room first if it does not fit. */
  finish(last: string): Promise<void> | undefined {
    if (this.write(last) === 'overflow') return this.writer.waitForRoom().then(() => this.finish(last));
    this.end();
    return undefined;
  }

  /** Flushes what is queued and ends the response. */
  end(): void {
    this.writer.end();
    this.#leave();
  }

  /** Drops the connection without flushing. */
  destroy(): void {
    this.writer.destroy();
    this.#leave();
  }

  #overflowed(): WriteOutcome {
    if (this.#policy === 'wait-for-room') return 'overflow';
    // Never drop a response or request: the frame is in the replay store (docs/design.md
    // "Invariants"); the connection goes and the client resumes from its last id.
    this.#counters.add('overflowCloses');
    this.#owner?.connectionOverflowed(this);
    this.destroy();
    return 'overflow';
  }

  /** Idempotent: deleting a writer the set does not hold is a no-op. */
  #leave(): void {
    this.#live.delete(this.writer);
  }
}
