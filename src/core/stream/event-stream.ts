/**
 * A logical SSE stream of a session: the answer stream of one POST, or the standalone GET stream
 * (number 0). It outlives HTTP connections: events get ids and go to the replay store whether or
 * not a connection is attached, and a GET with Last-Event-ID attaches a new connection that first
 * replays what followed the cursor, then continues live with no gap and no duplicate
 * (2025-11-25 basic/transports §"Resumability and Redelivery").
 */
import { OneAtATime } from '../../flow/one-at-a-time.js';
import type { PartialFrame } from '../../flow/partial-frame.js';
import type { ProgressEvent } from '../../jsonrpc/progress-json.js';
import { encodeRetry, OPEN_COMMENT, RESUMED_COMMENT } from '../../sse/encode.js';
import { type ConnectionOwner, type OverflowPolicy, SseConnection } from '../answer/connection.js';
import { type ResumePoint, streamCloseEvent, streamEvent } from '../observe/probe.js';
import { queueStats, type StreamStats } from '../observe/stats.js';
import type { Headers, ResponseSink } from '../pipeline/sink.js';
import { type DeliveryState, DeliveryWaiters } from './delivery.js';
import { EventLog } from './event-log.js';
import { AwayHold } from './partial-output.js';
import type { ResumeOutcome } from './replay-read.js';
import { replayOpening, resumePrimer } from './resume-primer.js';
import type { SseWriter, WriteOutcome } from './sse-writer.js';
import type { StreamContext, StreamKind, StreamShared, StreamWatcher } from './stream-context.js';
import { armGuard, type StreamGuard } from './stream-guard.js';

/** A frame produced while a replay is read, written after it. */
type Held = { seq: number; frame: string; key: string | undefined };

export class EventStream implements ConnectionOwner {
  /**
   * A session's stream keeps every frame in the replay store before writing it, so a blocked
   * socket may be closed: the client resumes from its last id (answer/connection.ts).
   */
  static readonly overflow: OverflowPolicy = 'close-and-resume';
  readonly num: number;
  readonly kind: StreamKind;
  readonly #ctx: StreamContext;
  readonly #sh: StreamShared;
  /** Each frame's seq and event id, and the store's copy of it (event-log.ts). */
  readonly #log: EventLog;
  /** The attached connection (answer/connection.ts: its writer, the live set, overflow). */
  #conn: SseConnection | undefined;
  /** Resumes of one stream run one after another. */
  readonly #resumes = new OneAtATime();
  /** Frames produced while a replay is being read; written after it, deduplicated by seq. */
  #held: Held[] | undefined;
  /** Highest seq handed to any connection. */
  #delivered = 0;
  /** True once a frame with an id reached a connection: only then may the server close early. */
  #sentId = false;
  #done = false;
  /** A connection was attached at least once (the client uses this stream). */
  #everAttached = false;
  /** Connections attached so far: tells a waiter whether the one that carried its frames was replaced. */
  #attaches = 0;
  /**
   * The cursor (Last-Event-ID) a resumed connection started from, when the peer lost it before the
   * stream was done; cleared when a connection attaches. See `#resume` for why a fresh GET uses it.
   */
  #lostCursor: number | undefined;
  /** Waiters for "every frame up to seq left its queue" (json ordering); made by the first wait. */
  #waiters: DeliveryWaiters | undefined;
  /** Why the current connection is being closed by the server, for the stream-close probe. */
  #closing: 'overflow' | 'server' | undefined;
  #tookOverAt: number | undefined;
  /** Producers of partial output held while the consumer is away (partial-output.ts). */
  #away: AwayHold | undefined;
  /** Told when the connection goes away before the stream is done, and when one attaches. */
  #watcher: StreamWatcher | undefined;

  constructor(ctx: StreamContext, num: number, kind: StreamKind) {
    this.#ctx = ctx;
    this.#sh = ctx.shared;
    this.num = num;
    this.kind = kind;
    this.#log = new EventLog(ctx, num, this);
  }
  /** Who is told of this stream's connection coming and going (its exchange: the orphan timer). */
  watch(watcher: StreamWatcher): void {
    this.#watcher = watcher;
  }

  get attached(): boolean {
    return this.#conn !== undefined;
  }
  get done(): boolean {
    return this.#done;
  }
  get writer(): SseWriter | undefined {
    return this.#conn?.writer;
  }
  /** When the connection attached now took over another live one (epoch ms); undefined if it did not. */
  get tookOverAt(): number | undefined {
    return this.#tookOverAt;
  }
  /** The connection just attached took over another live one. */
  tookOver(at: number): void {
    this.#tookOverAt = at;
  }
  /** The seq of the newest frame produced. */
  get seq(): number {
    return this.#log.seq;
  }
  get everAttached(): boolean {
    return this.#everAttached;
  }
  /** The attached connection's queue, for `stats({ perStream: true })`; undefined when none is attached. */
  stats(): StreamStats | undefined {
    const w = this.#conn?.writer;
    return w === undefined ? undefined : queueStats(w, this.#ctx.sessionHash, this.num, this.kind);
  }
  /** Changes each time a connection attaches (see Session.standaloneDelivered). */
  get connection(): number {
    return this.#attaches;
  }

  /**
   * One delta of partial output (flow/partial-frame.ts). Each delta gets its own id and is stored on its
   * own; on a blocked socket it merges with the queued tail instead of replacing anything. Its
   * producer waits for room above the high-water mark, like a response: text is never dropped, so
   * the tool must slow down to the reader's pace instead.
   */
  sendPartial(p: PartialFrame): Promise<void> | undefined {
    const { seq, frame } = this.#log.partial(p);
    if (this.#held !== undefined) {
      this.#held.push({ seq, frame: frame ?? p.render(), key: undefined });
      return undefined;
    }
    const c = this.#conn;
    if (c === undefined) return this.#awayWait();
    this.#record(seq, c.writePartial(p, frame));
    const w = c.writer;
    if (w.closed) return this.#awayWait();
    if (!w.blocked) return undefined;
    return w.congested ? w.waitForRoom() : undefined;
  }

  /** A producer of partial output whose consumer is away: paced, or held (partial-output.ts). */
  #awayWait(): Promise<void> | undefined {
    this.#away ??= new AwayHold(this.#sh.pacer, this.#sh.orphanTimeoutMs);
    return this.#away.wait(this.#ctx.store, this.#ctx.sessionKey, this.num);
  }

  /** Resolves once every frame up to `seq` reached a connection and left its queue (delivery.ts). */
  whenDelivered(seq: number): Promise<void> | undefined {
    this.#waiters ??= new DeliveryWaiters();
    return this.#waiters.when(seq, this.#delivery());
  }

  #delivery(): DeliveryState {
    return {
      delivered: this.#delivered,
      writer: this.#conn?.writer,
      over: this.#done || this.#ctx.ended,
    };
  }

  #checkDelivery(): void {
    if (this.#waiters?.empty === false) this.#waiters.check(this.#delivery(), this.#done);
  }

  /**
   * Sends one serialized JSON-RPC message (progress may bring its `parts` for the store: event-log.ts).
   * Returns a promise when the producer should wait for room (backpressure); undefined when it may go on.
   */
  send(json: string, key?: string, urgent?: boolean, parts?: ProgressEvent): Promise<void> | undefined {
    const frame = this.#log.frame(json, undefined, parts);
    // While a resume reads the store no writer is attached: hold frames so none falls between the
    // store's snapshot and the live stream (they are deduplicated by seq afterwards).
    if (this.#held !== undefined) {
      this.#held.push({ seq: this.#log.seq, frame, key });
      return undefined;
    }
    const c = this.#conn;
    // No connection: the event waits in the replay store; pace the producer (see pacer.ts).
    if (c === undefined) return this.#sh.pacer.wait();
    this.#record(this.#log.seq, c.write(frame, key, urgent ?? key !== undefined));
    const w = c.writer;
    // An overflow just closed the connection: the frame is in the store; nothing to wait for.
    if (w.closed) return this.#sh.pacer.wait();
    if (!w.blocked) return undefined;
    // Blocked socket: a response or request waits for room once the queue passes the high-water
    // mark; a progress update (coalescible, never piling up) waits for room or the next pace tick.
    if (key === undefined) return w.congested ? w.waitForRoom() : undefined;
    const tick = this.#sh.pacer.wait();
    return tick === undefined ? undefined : Promise.race([w.waitForRoom(), tick]);
  }

  /** Opens this stream on a fresh response: headers, then priming event or comment. */
  open(sink: ResponseSink, headers: Headers, guard?: StreamGuard): void {
    let first: string;
    if (this.#ctx.priming && this.#ctx.tag !== undefined) {
      first = this.#log.frame('', this.#sh.retryMs);
      this.#delivered = this.#log.seq;
      this.#sentId = true;
    } else {
      first = OPEN_COMMENT;
    }
    this.#bind(sink, headers, first, guard);
    this.#checkDelivery();
  }

  /**
   * Attaches a GET connection that resumes after `afterSeq` (or, for a fresh GET on the standalone
   * stream, after the last frame any connection received). Returns the store's verdict when the
   * events cannot be had; nothing was written to `sink` then, and the connection already attached
   * (if any) is left as it was — a refused cursor must not cut a live stream. Resumes of one stream
   * run one at a time.
   */
  resume(
    sink: ResponseSink,
    headers: Headers,
    afterSeq: number | undefined,
    guard?: StreamGuard,
  ): Promise<ResumeOutcome> {
    return this.#resumes.run(() => this.#resume(sink, headers, afterSeq, guard));
  }

  async #resume(
    sink: ResponseSink,
    headers: Headers,
    afterSeq: number | undefined,
    guard: StreamGuard | undefined,
  ): Promise<ResumeOutcome> {
    // A resume queued behind another may run after its session ended (DELETE, shutdown).
    if (this.#ctx.ended) return 'ended';
    const fresh = afterSeq === undefined;
    // A fresh GET right after a resumed connection was lost: a client that tracks event ids would
    // have sent the newest it got on that connection, so it got none of what was written there.
    // The official SDK client (1.x) forgets the cursor it resumed with when the resumed connection
    // dies before a new event arrives, and then opens a fresh GET; starting after the last cursor it
    // did present, instead of after the last frame written, keeps those frames from being lost
    // (MCP 2025-11-25 basic/transports §"Resumability and Redelivery").
    const from = afterSeq ?? this.#lostCursor ?? this.#delivered;
    if (!this.#log.replayable || (fresh && this.#log.seq <= from)) {
      if (!fresh) return 'unknown';
      if (sink.closed) return 'closed';
      this.#detach(true);
      this.open(sink, headers, guard);
      return 'ok';
    }
    // Frames produced while the store is read are held: they go to the new connection after the
    // replay (deduplicated by seq) or, if the cursor is refused, to the connection that was there.
    this.#held = [];
    const r = await this.#log.readBack(from, fresh);
    const held = this.#held;
    this.#held = undefined;
    if (r === undefined || r.status !== 'ok' || sink.closed || this.#ctx.ended) {
      // Refused (or nobody left to serve): the frames held meanwhile go where they were headed, and a
      // stream that finished meanwhile ends there (finish() left that to this resume).
      const old = this.#conn;
      if (old !== undefined) {
        for (const h of held) this.#put(old, h.seq, h.frame, h.key);
        if (this.#done) old.end();
      }
      if (this.#ctx.ended) return 'ended';
      if (r === undefined) return 'unavailable';
      return r.status === 'ok' ? 'closed' : r.status;
    }
    this.#detach(true);
    const primer = fresh
      ? ''
      : resumePrimer(this.#ctx.priming, !this.#done, r.events.length, () => this.#log.idOf(from));
    const { first, last } = replayOpening(primer, r.events, from);
    if (r.events.length > 0) this.#sentId = true;
    if (last > this.#delivered) this.#delivered = last;
    const replayed = r.events.length;
    this.#bind(sink, headers, first.length > 0 ? first : RESUMED_COMMENT, guard, {
      cursor: fresh ? undefined : from,
      replayed,
    });
    const c = this.#conn;
    if (c !== undefined) for (const h of held) if (h.seq > last) this.#put(c, h.seq, h.frame, h.key);
    if (this.#done) this.#conn?.end();
    this.#checkDelivery();
    return 'ok';
  }

  /**
   * Server-initiated close of the connection without ending the stream (SSE polling, SEP-1699):
   * only once the client holds an event id to resume from, after a `retry:` hint.
   */
  closeConnection(): boolean {
    const c = this.#conn;
    if (c === undefined || !this.#sentId) return false;
    c.write(encodeRetry(this.#sh.retryMs));
    this.#detach(true);
    return true;
  }

  /** No more events: finish the attached connection and let the store free the buffer later. */
  finish(graceMs: number): void {
    if (this.#done) return;
    this.#done = true;
    this.#away?.release();
    if (this.#held === undefined) this.#conn?.end();
    this.#log.end(graceMs);
  }

  /** Ends the attached connection (shutdown, auth expiry) after a retry hint so the client resumes. */
  interrupt(): void {
    const c = this.#conn;
    if (c === undefined) return;
    this.#closing = 'server';
    if (this.#sentId) c.write(encodeRetry(this.#sh.retryMs));
    this.#detach(true);
  }

  /** Drops the connection at once. */
  abort(): void {
    const c = this.#conn;
    if (c !== undefined) {
      this.#conn = undefined;
      c.destroy();
    }
  }

  /**
   * The store lost a frame (the guarded store counted and logged it): end the connection with a retry
   * hint so the client resumes; the resume then either finds every frame or is told `evicted`.
   * Called by this stream's event log (a method, not a closure the log keeps per stream).
   */
  appendFailed(): void {
    if (this.#done || this.#held !== undefined) return;
    this.interrupt();
  }

  #put(c: SseConnection, seq: number, frame: string, key: string | undefined): void {
    this.#record(seq, c.write(frame, key));
  }

  #record(seq: number, outcome: WriteOutcome): void {
    if (outcome === 'overflow') {
      // The connection closed itself (close-and-resume, answer/connection.ts): the frame is in the
      // replay store and the client resumes from its last id.
      this.#watcher?.streamDetached();
      return;
    }
    if (outcome === 'closed') return;
    this.#sh.counters.add('eventsWritten');
    if (seq > this.#delivered) this.#delivered = seq;
    if (this.#ctx.tag !== undefined) this.#sentId = true;
    this.#checkDelivery();
  }

  #bind(
    sink: ResponseSink,
    headers: Headers,
    first: string,
    guard: StreamGuard | undefined,
    resumed?: ResumePoint,
  ): void {
    const c = new SseConnection(sink, this.#sh, EventStream.overflow, this, resumed);
    this.#conn = c;
    this.#tookOverAt = undefined;
    this.#everAttached = true;
    this.#attaches++;
    this.#lostCursor = undefined;
    this.#closing = undefined;
    this.#sh.probe?.streamOpen(streamEvent(this.#ctx.sessionHash, this.num, this.kind, c.resumed));
    c.open(200, headers, first);
    armGuard(sink, guard, this.#sh.now, () => {
      this.#sh.counters.add('authStreamEnds');
      if (this.#conn === c) this.interrupt();
    });
    this.#watcher?.streamAttached();
    this.#away?.release();
  }

  /** ConnectionOwner: an overflow drops `c` (close-and-resume); the client resumes from its last id. */
  connectionOverflowed(c: SseConnection): void {
    if (this.#conn !== c) return;
    this.#closing = 'overflow';
    this.#conn = undefined;
  }

  /** ConnectionOwner: `c` is gone, by the peer or by a server-side close (which cleared #conn first). */
  connectionClosed(c: SseConnection): void {
    const probe = this.#sh.probe;
    if (probe !== undefined) {
      const reason = this.#done ? 'finished' : (this.#closing ?? (this.#conn === c ? 'client' : 'server'));
      probe.streamClose(streamCloseEvent(this.#ctx.sessionHash, this.num, this.kind, c.resumed, reason));
    }
    if (this.#conn === c) {
      // Lost by the peer (a server-side close clears #conn first and never comes here).
      this.#conn = undefined;
      if (!this.#done) this.#lostCursor = c.resumed?.cursor;
      if (!this.#done) this.#watcher?.streamDetached();
    }
  }

  #detach(graceful: boolean): void {
    const c = this.#conn;
    if (c === undefined) return;
    this.#conn = undefined;
    if (graceful) c.end();
    else c.destroy();
    if (!this.#done) this.#watcher?.streamDetached();
  }
}
