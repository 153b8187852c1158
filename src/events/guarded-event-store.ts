/**
 * Wraps an application-supplied EventStore so that a networked store (one that rejects, throws or is
 * slow) can never crash the process, stall a stream, or let a gap pass unnoticed:
 *
 * - a rejected or throwing `append` / `endStream` / `dropSession` is counted and logged; for `append`
 *   the caller gets a rejected promise so the stream can end its connection with a retry hint (the
 *   client then resumes, and the resume tells it whether the events can still be had);
 * - `replay` first waits for every append of that stream still in flight, so a replay read never
 *   overtakes a write the stream already made (an append issued after the read starts is held by
 *   the stream and deduplicated, see event-stream.ts);
 * - a replay whose events are not the contiguous run after the cursor is reported as `evicted`
 *   (the client learns it lost events) instead of being served with a hole in it;
 * - a rejected `replay` becomes a `StoreUnavailableError` the GET path answers with 503.
 *
 * The default in-memory store is synchronous and never throws; it is not wrapped (no cost on the
 * per-event path). MCP 2025-11-25 basic/transports §"Resumability and Redelivery": the server must
 * replay the messages after the cursor, and only those, or decline.
 */
import type { EventStore, ReplayResult, StoredEvent } from './event-store.js';

export type StoreOperation = 'append' | 'replay' | 'endStream' | 'dropSession';

/** What the wrapper reports to: counters and a logger, owned by the endpoint. */
export interface StoreErrorSink {
  /** A store call failed (rejected, threw, or answered something malformed). */
  storeError(op: StoreOperation, error: unknown): void;
  /** A replay answer had a hole in it (reported to the client as `evicted`). */
  storeGap(): void;
}

/** The store could not answer a replay: the resume is refused with 503 and may be retried. */
export class StoreUnavailableError extends Error {
  readonly code = 'store-unavailable';
  constructor(cause: unknown) {
    super('the event store did not answer', { cause });
    this.name = 'StoreUnavailableError';
  }
}

export class GuardedEventStore implements EventStore {
  readonly #inner: EventStore;
  readonly #sink: StoreErrorSink;
  /** Appends still in flight, per `session\0stream`; only async stores put anything here. */
  readonly #pending = new Map<string, Set<Promise<void>>>();

  constructor(inner: EventStore, sink: StoreErrorSink) {
    this.#inner = inner;
    this.#sink = sink;
  }

  /** Appends in flight, all streams (for tests and stats). */
  get pendingAppends(): number {
    let n = 0;
    for (const s of this.#pending.values()) n += s.size;
    return n;
  }

  /**
   * Returns undefined when the store took the event synchronously, otherwise a promise that settles
   * when it is stored and rejects (after counting and logging) when it could not be.
   */
  append(sessionId: string, streamId: number, event: StoredEvent): Promise<void> | undefined {
    let r: void | Promise<void>;
    try {
      r = this.#inner.append(sessionId, streamId, event);
    } catch (error) {
      this.#sink.storeError('append', error);
      return Promise.reject(error);
    }
    if (r === undefined || typeof (r as Promise<void>).then !== 'function') return undefined;
    const key = `${sessionId}\0${streamId}`;
    let set = this.#pending.get(key);
    if (set === undefined) {
      set = new Set();
      this.#pending.set(key, set);
    }
    const pending = set;
    const p: Promise<void> = Promise.resolve(r).then(
      () => this.#settled(key, pending, p),
      (error: unknown) => {
        this.#settled(key, pending, p);
        this.#sink.storeError('append', error);
        throw error;
      },
    );
    pending.add(p);
    return p;
  }

  async replay(
    sessionId: string,
    streamId: number,
    afterSeq: number,
    options?: { allowGap?: boolean },
  ): Promise<ReplayResult> {
    const inflight = this.#pending.get(`${sessionId}\0${streamId}`);
    // Order the read after the writes already made: a failed one shows up as a gap below.
    if (inflight !== undefined && inflight.size > 0) await Promise.allSettled([...inflight]);
    let r: ReplayResult;
    try {
      r = await this.#inner.replay(sessionId, streamId, afterSeq, options);
    } catch (error) {
      this.#sink.storeError('replay', error);
      throw new StoreUnavailableError(error);
    }
    if (r === null || typeof r !== 'object') {
      const error = new TypeError('EventStore.replay answered something that is not a ReplayResult');
      this.#sink.storeError('replay', error);
      throw new StoreUnavailableError(error);
    }
    if (r.status !== 'ok' || options?.allowGap === true) return r;
    let expect = afterSeq + 1;
    for (const e of r.events) {
      if (e.seq !== expect) {
        this.#sink.storeGap();
        return { status: 'evicted' };
      }
      expect++;
    }
    return r;
  }

  endStream(sessionId: string, streamId: number, graceMs: number): void {
    this.#fireAndCount('endStream', () => this.#inner.endStream(sessionId, streamId, graceMs));
  }

  dropSession(sessionId: string): void {
    for (const key of this.#pending.keys()) {
      if (key.startsWith(`${sessionId}\0`)) this.#pending.delete(key);
    }
    this.#fireAndCount('dropSession', () => this.#inner.dropSession(sessionId));
  }

  #fireAndCount(op: StoreOperation, call: () => void | Promise<void>): void {
    try {
      const r = call();
      if (r !== undefined && typeof (r as Promise<void>).then === 'function') {
        Promise.resolve(r).then(undefined, (error: unknown) => this.#sink.storeError(op, error));
      }
    } catch (error) {
      this.#sink.storeError(op, error);
    }
  }

  #settled(key: string, set: Set<Promise<void>>, p: Promise<void>): void {
    set.delete(p);
    if (set.size === 0 && this.#pending.get(key) === set) this.#pending.delete(key);
  }
}
