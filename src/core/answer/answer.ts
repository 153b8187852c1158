/**
 * The answer to one POST that carried requests, whichever era: JSON now, or upgraded to an SSE
 * stream (MCP 2025-11-25 and 2026-07-28 basic/transports §"Sending Messages to the Server": the
 * server picks JSON or SSE per request). With policy
 * - 'auto' it stays undecided: a JSON answer if the response comes before anything else related to
 *   the request; the first related message, or `streamAfterMs` without a response, upgrades it;
 * - 'sse' the stream is opened at once (or, deferred, when the first thing is ready to go);
 * - 'json' it never streams: related messages cannot ride on it.
 * Upgrading opens the stream the owner provides (a session's replayable EventStream, or a plain
 * SseConnection for the 2026-07-28 era) with the answer's overflow policy: close-and-resume for
 * sessions, wait-for-room for 2026-07-28 requests (answer/connection.ts). The owner decides what a
 * JSON answer holds (one response, a batch, a refusal); the answer decides when it may still be one.
 */
import type { Policy } from '../pipeline/route.js';
import type { Headers, ResponseSink } from '../pipeline/sink.js';
import type { OverflowPolicy } from './connection.js';

export type AnswerState = 'pending' | 'sse' | 'done';

/**
 * What an answer asks of its owner: open the SSE stream on the answer's response, with the
 * answer's overflow policy. A function, not an object literal holding one: V8 pretenures an
 * allocation site whose objects keep surviving scavenges, and a per-request `{ openStream: … }`
 * allocated in the old generation kept its closure, and through it the whole exchange, its
 * request and response, alive through every scavenge after the request ended (the bulk of 4.9 KB
 * promoted per SSE echo; docs/benchmarks.md, "SSE answers and V8's pretenuring"). Closures have
 * no allocation site.
 */
export type OpenStream<S> = (overflow: OverflowPolicy, fromTimer: boolean) => S;

export class Answer<S> {
  readonly #sink: ResponseSink;
  readonly #policy: Policy;
  readonly #overflow: OverflowPolicy;
  readonly #openStream: OpenStream<S>;
  #state: AnswerState = 'pending';
  #stream: S | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(sink: ResponseSink, policy: Policy, overflow: OverflowPolicy, open: OpenStream<S>) {
    this.#sink = sink;
    this.#policy = policy;
    this.#overflow = overflow;
    this.#openStream = open;
  }

  get state(): AnswerState {
    return this.#state;
  }
  get policy(): Policy {
    return this.#policy;
  }
  get overflow(): OverflowPolicy {
    return this.#overflow;
  }
  get pending(): boolean {
    return this.#state === 'pending';
  }
  get streaming(): boolean {
    return this.#state === 'sse';
  }
  get done(): boolean {
    return this.#state === 'done';
  }
  /** The stream, once upgraded. */
  get stream(): S | undefined {
    return this.#stream;
  }
  get sinkClosed(): boolean {
    return this.#sink.closed;
  }

  /**
   * With policy 'auto': an answer still undecided after `afterMs` becomes a stream, so a client
   * (or proxy) waiting on a long request sees bytes early. Nothing with `afterMs` <= 0.
   */
  armTimer(afterMs: number): void {
    if (this.#policy !== 'auto' || afterMs <= 0 || this.#state !== 'pending') return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#state === 'pending' && !this.#sink.closed) this.#open(true);
    }, afterMs);
    this.#timer.unref?.();
  }

  /**
   * Opens the stream now if the answer is undecided (policy 'sse', a response a client refusing
   * JSON must get as a stream, a server-side close); the stream, if one was opened.
   */
  upgrade(): S | undefined {
    if (this.#state === 'pending') this.#open(false);
    return this.#stream;
  }

  /**
   * The stream a message related to the request goes on, upgrading an undecided answer; undefined
   * when this answer cannot carry it: policy 'json', already finished, or its client gone before
   * any stream was opened.
   */
  carrier(): S | undefined {
    if (this.#state === 'done' || this.#policy === 'json') return undefined;
    if (this.#state === 'pending' && this.#sink.closed) return undefined;
    return this.upgrade();
  }

  /**
   * Whether the final answer goes out as JSON: the answer is undecided, and either the client takes
   * JSON or the owner asks for it anyway (an error whose HTTP status matters).
   */
  answersJson(force: boolean): boolean {
    return this.#state === 'pending' && (this.#policy !== 'sse' || force);
  }

  /** Sends the JSON answer (nothing when the client is gone) and finishes the answer. */
  respond(status: number, headers: Headers, body: string): void {
    this.finish();
    if (!this.#sink.closed) this.#sink.respond(status, headers, body);
  }

  /** No more is written through the answer (the owner ends its stream itself). */
  finish(): void {
    this.#clearTimer();
    this.#state = 'done';
  }

  #open(fromTimer: boolean): void {
    this.#clearTimer();
    this.#state = 'sse';
    this.#stream = this.#openStream(this.#overflow, fromTimer);
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
